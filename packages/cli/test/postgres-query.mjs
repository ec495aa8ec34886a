// Runs one SQL statement against a PostgreSQL database and prints its rows as one JSON array:
//   node postgres-query.mjs <url> <sql> [<params as a JSON array>]
// The `weft serve --postgres` tests read the shared database through it: the vitest process of
// this package cannot load `pg` itself (see serve-postgres-world.ts).
import pg from 'pg'

const [url, text, params = '[]'] = process.argv.slice(2)
const client = new pg.Client({ connectionString: url })
await client.connect()
try {
  const { rows } = await client.query(text, JSON.parse(params))
  process.stdout.write(JSON.stringify(rows))
} finally {
  await client.end()
}
