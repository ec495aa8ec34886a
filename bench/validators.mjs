// Validator benchmark: @weft/validators against Ajv 2020 + ajv-formats compiled from the
// normative schemas, in one process and one run (issue: foundation, item 7).
import { spawnSync } from 'node:child_process'
import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { bundleDir, throughput } from './measure.mjs'
import { fmt, median, table } from './table.mjs'

const KINDS = ['command', 'event', 'websocket-frame', 'work-contract', 'work-item', 'lease', 'artifact', 'evidence', 'context-package']
const BATCH = 200 // validations per timed iteration, so timer overhead does not dominate

function ajvFor(bundle, allErrors, Ajv2020, addFormats) {
  const ajv = new Ajv2020({ allErrors, strict: false })
  addFormats(ajv)
  const dir = join(bundle, 'schemas')
  for (const f of readdirSync(dir).filter((f) => f.endsWith('.schema.json'))) ajv.addSchema(JSON.parse(readFileSync(join(dir, f), 'utf8')))
  return (file) => ajv.getSchema(`https://missionweaveprotocol.dev/schemas/0.1/${file}`)
}

/** A Command with thousands of invalid extensions, well over 100 KB. */
function hostileCommand(valid) {
  const extensions = {}
  for (let i = 0; i < 4000; i++) {
    extensions[`urn:weft:bad:${i}`] = { version: 'not-semver', critical: 'yes', data: { i }, unknown: true }
  }
  return { ...valid, extensions }
}

function coldStart(script, runs) {
  const times = []
  for (let i = 0; i < runs; i++) {
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', cwd: join(import.meta.dirname, '..') })
    if (r.status !== 0) throw new Error(`cold start failed: ${r.stderr}`)
    times.push(Number(r.stdout.trim()))
  }
  return median(times)
}

export async function run({ log }) {
  const bundle = await bundleDir()
  const { validators, validatorForFile } = await import('@weft/validators')
  const { default: Ajv2020 } = await import('ajv/dist/2020.js')
  const { default: addFormats } = await import('ajv-formats')
  const ajvAll = ajvFor(bundle, true, Ajv2020, addFormats)
  const ajvFirst = ajvFor(bundle, false, Ajv2020, addFormats)
  const manifest = JSON.parse(readFileSync(join(bundle, 'conformance/manifest.json'), 'utf8'))
  const load = (v) => JSON.parse(readFileSync(join(bundle, v.instance), 'utf8'))
  const file = (v) => v.schema.split('/').pop()

  const rows = []
  const summary = { kinds: {}, ajvRejectsValid: [] }
  const missed = []
  log('validators: valid documents per second')
  for (const kind of KINDS) {
    const vectors = manifest.filter((v) => v.valid && file(v) === `${kind}.schema.json`)
    const weft = validatorForFile(`${kind}.schema.json`)
    const a1 = ajvAll(`${kind}.schema.json`)
    const a0 = ajvFirst(`${kind}.schema.json`)
    for (const v of vectors) if (!weft.check(load(v))) throw new Error(`${kind}: weft rejects the valid vector ${v.name}`)
    // Stock ajv-formats misjudges some valid vectors (e.g. an identifier with an empty hier-part);
    // those are reported, and both sides are timed on the vectors both accept.
    for (const v of vectors.filter((v) => !a1(load(v)))) summary.ajvRejectsValid.push(v.name)
    const docs = vectors.filter((v) => a1(load(v))).map(load)
    const batch = Array.from({ length: BATCH }, (_, i) => docs[i % docs.length])
    const r = await throughput(
      [
        [
          'weft',
          () => {
            for (const d of batch) weft.check(d)
          },
        ],
        [
          'ajvAll',
          () => {
            for (const d of batch) a1(d)
          },
        ],
        [
          'ajvFirst',
          () => {
            for (const d of batch) a0(d)
          },
        ],
      ],
      { time: 400, warmupTime: 150, log },
    )
    const w = r.weft * BATCH
    const vsAll = r.weft / r.ajvAll
    const vsFirst = r.weft / r.ajvFirst
    rows.push([kind, fmt(w), fmt(r.ajvAll * BATCH), fmt(r.ajvFirst * BATCH), `${vsAll.toFixed(2)}x`, `${vsFirst.toFixed(2)}x`])
    summary.kinds[kind] = {
      weftPerSec: Math.round(w),
      ajvAllErrorsPerSec: Math.round(r.ajvAll * BATCH),
      ajvFirstErrorPerSec: Math.round(r.ajvFirst * BATCH),
      vsAjvAllErrors: +vsAll.toFixed(3),
      vsAjvFirstError: +vsFirst.toFixed(3),
    }
    if (vsAll < 2) missed.push(`${kind} ${vsAll.toFixed(2)}x Ajv(allErrors:true) < 2x`)
    if (vsFirst < 1.2) missed.push(`${kind} ${vsFirst.toFixed(2)}x Ajv(allErrors:false) < 1.2x`)
  }

  log('validators: rejections per second')
  const invalid = manifest.filter((v) => !v.valid).map((v) => ({ doc: load(v), weft: validatorForFile(file(v)), a1: ajvAll(file(v)), a0: ajvFirst(file(v)) }))
  for (const x of invalid) if (x.weft.check(x.doc)) throw new Error('weft accepts an invalid vector')
  const rInvalid = await throughput(
    [
      [
        'weft',
        () => {
          for (const x of invalid) x.weft.check(x.doc)
        },
      ],
      [
        'weftErrors',
        () => {
          for (const x of invalid) x.weft.errors(x.doc)
        },
      ],
      [
        'ajvAll',
        () => {
          for (const x of invalid) x.a1(x.doc)
        },
      ],
      [
        'ajvFirst',
        () => {
          for (const x of invalid) x.a0(x.doc)
        },
      ],
    ],
    { time: 400, warmupTime: 150, log },
  )
  const n = invalid.length
  rows.push([
    `${n} invalid vectors`,
    fmt(rInvalid.weft * n),
    fmt(rInvalid.ajvAll * n),
    fmt(rInvalid.ajvFirst * n),
    `${(rInvalid.weft / rInvalid.ajvAll).toFixed(2)}x`,
    `${(rInvalid.weft / rInvalid.ajvFirst).toFixed(2)}x`,
  ])
  rows.push([`  with errors()`, fmt(rInvalid.weftErrors * n), '', '', `${(rInvalid.weftErrors / rInvalid.ajvAll).toFixed(2)}x`, `${(rInvalid.weftErrors / rInvalid.ajvFirst).toFixed(2)}x`])
  summary.invalidVectors = {
    weftPerSec: Math.round(rInvalid.weft * n),
    weftErrorsPerSec: Math.round(rInvalid.weftErrors * n),
    ajvAllErrorsPerSec: Math.round(rInvalid.ajvAll * n),
    ajvFirstErrorPerSec: Math.round(rInvalid.ajvFirst * n),
  }

  const validCommand = load(manifest.find((v) => v.valid && file(v) === 'command.schema.json'))
  const hostile = hostileCommand(validCommand)
  const hostileBytes = Buffer.byteLength(JSON.stringify(hostile))
  const cmd = validators.command
  const h1 = ajvAll('command.schema.json')
  const h0 = ajvFirst('command.schema.json')
  if (cmd.check(hostile) || h1(hostile)) throw new Error('hostile command accepted')
  const rHostile = await throughput(
    [
      ['weft', () => cmd.check(hostile)],
      ['weftErrors', () => cmd.errors(hostile)],
      ['ajvAll', () => h1(hostile)],
      ['ajvFirst', () => h0(hostile)],
      // The floor for any validator of a parsed object: V8 must collect all keys of a large
      // (dictionary-mode) object before yielding the first one, so merely reaching the first bad
      // extension costs this much.
      [
        'floor',
        () => {
          for (const k in hostile.extensions) return k
        },
      ],
    ],
    { time: 400, warmupTime: 150, log },
  )
  const hostileRatio = rHostile.weft / rHostile.ajvAll
  const hostileErrorsRatio = rHostile.weftErrors / rHostile.ajvAll
  rows.push([
    `hostile command ${Math.round(hostileBytes / 1024)} KB`,
    fmt(rHostile.weft),
    fmt(rHostile.ajvAll),
    fmt(rHostile.ajvFirst),
    `${hostileRatio.toFixed(0)}x`,
    `${(rHostile.weft / rHostile.ajvFirst).toFixed(1)}x`,
  ])
  rows.push([
    `  with errors() (${cmd.errors(hostile).length} issues)`,
    fmt(rHostile.weftErrors),
    '',
    '',
    `${hostileErrorsRatio.toFixed(0)}x`,
    `${(rHostile.weftErrors / rHostile.ajvFirst).toFixed(1)}x`,
  ])
  rows.push([`  floor: first key of its extensions`, fmt(rHostile.floor), '', '', `${(rHostile.floor / rHostile.ajvAll).toFixed(0)}x`, ''])
  summary.hostile = {
    bytes: hostileBytes,
    weftPerSec: Math.round(rHostile.weft),
    weftErrorsPerSec: Math.round(rHostile.weftErrors),
    ajvAllErrorsPerSec: Math.round(rHostile.ajvAll),
    ajvFirstErrorPerSec: Math.round(rHostile.ajvFirst),
    vsAjvAllErrors: +hostileRatio.toFixed(1),
    errorsVsAjvAllErrors: +hostileErrorsRatio.toFixed(1),
    enumerationFloorPerSec: Math.round(rHostile.floor),
    checkVsFloor: +(rHostile.weft / rHostile.floor).toFixed(2),
  }
  if (hostileRatio < 100)
    missed.push(
      `hostile command ${hostileRatio.toFixed(0)}x < 100x Ajv(allErrors:true) (at ${((100 * rHostile.weft) / rHostile.floor).toFixed(0)}% of the key-enumeration floor, which is ${(rHostile.floor / rHostile.ajvAll).toFixed(0)}x)`,
    )

  log('validators: cold start (fresh processes)')
  const samples = JSON.stringify(Object.fromEntries(KINDS.map((k) => [k, load(manifest.find((v) => v.valid && file(v) === `${k}.schema.json`))])))
  const weftCold = `const t0 = performance.now(); const { validatorForFile } = await import('@weft/validators'); const s = ${samples}; for (const k in s) if (!validatorForFile(k + '.schema.json').check(s[k])) throw new Error(k); const all = ['websocket-frame','command','event','agent-card','presence-record','mission','group','membership','conversation','message','work-contract','work-item','artifact','evidence','lease','approval','context-package','group-snapshot','extension-profile','first-admission-record','error']; for (const f of all) validatorForFile(f + '.schema.json').check({}); console.log(performance.now() - t0)`
  const ajvCold = `const t0 = performance.now(); const { default: Ajv2020 } = await import('ajv/dist/2020.js'); const { default: addFormats } = await import('ajv-formats'); const fs = await import('node:fs'); const dir = ${JSON.stringify(join(bundle, 'schemas'))}; const ajv = new Ajv2020({ allErrors: true, strict: false }); addFormats(ajv); const files = fs.readdirSync(dir).filter((f) => f.endsWith('.schema.json')); for (const f of files) ajv.addSchema(JSON.parse(fs.readFileSync(dir + '/' + f, 'utf8'))); const s = ${samples}; for (const f of files) { if (f === 'common.schema.json') continue; const v = ajv.getSchema('https://missionweaveprotocol.dev/schemas/0.1/' + f); const k = f.replace('.schema.json', ''); if (s[k] && !v(s[k])) throw new Error(k); v({}) } console.log(performance.now() - t0)`
  const coldWeft = coldStart(weftCold, 5)
  const coldAjv = coldStart(ajvCold, 5)
  const coldRatio = coldAjv / coldWeft
  rows.push(['cold start: import + first validation (ms)', coldWeft.toFixed(1), coldAjv.toFixed(1), '', `${coldRatio.toFixed(1)}x`, ''])
  summary.coldStart = { weftMs: +coldWeft.toFixed(1), ajvCompileAllMs: +coldAjv.toFixed(1), ratio: +coldRatio.toFixed(1) }
  if (coldWeft >= 150) missed.push(`cold start ${coldWeft.toFixed(0)} ms >= 150 ms`)
  if (coldRatio < 10) missed.push(`cold start only ${coldRatio.toFixed(1)}x faster than Ajv`)

  if (summary.ajvRejectsValid.length) log(`note: Ajv + ajv-formats rejects ${summary.ajvRejectsValid.length} valid vector(s): ${summary.ajvRejectsValid.join('; ')}`)
  summary.targetsMet = missed.length === 0
  summary.missed = missed
  const header = ['validators (per second)', 'weft', 'ajv allErrors', 'ajv first', 'vs allErrors', 'vs first']
  return { table: table(header, rows), summary, missed }
}
