/**
 * Sign in: the person loads their key file (a file, or its text pasted), the page imports the key
 * into WebCrypto (non-extractable) and wipes the seed and the text field, signs the server's
 * challenge and opens the session.
 * @module
 */
import { useRef, useState } from 'preact/hooks'
import { refusalOf, type Refusal } from '../errors.js'
import { readKeyFile } from '../keyfile.js'
import { signIn, type SignedIn } from '../session.js'
import { RefusalNote } from './common.js'

export function SignInScreen({ onSignedIn, notice }: { readonly onSignedIn: (session: SignedIn) => void; readonly notice: string | undefined }) {
  const [problem, setProblem] = useState<string | undefined>(undefined)
  const [refusal, setRefusal] = useState<Refusal | undefined>(undefined)
  const [busy, setBusy] = useState(false)
  const pasted = useRef<HTMLTextAreaElement>(null)
  const fileInput = useRef<HTMLInputElement>(null)

  const attempt = async (text: string): Promise<void> => {
    setProblem(undefined)
    setRefusal(undefined)
    const read = readKeyFile(text)
    // Whatever happens next, the key text leaves the form at once.
    if (pasted.current !== null) pasted.current.value = ''
    if (fileInput.current !== null) fileInput.current.value = ''
    if (!read.ok) {
      setProblem(read.problem)
      return
    }
    setBusy(true)
    try {
      onSignedIn(await signIn(read.key))
    } catch (error) {
      const r = refusalOf(error)
      setRefusal(r.code === 'LOCAL' ? { code: 'LOCAL', sentence: 'The key could not be used: its seed does not belong to its public key, or this browser cannot sign with Ed25519.' } : r)
    } finally {
      read.key.seed.fill(0)
      setBusy(false)
    }
  }

  const onFile = async (event: Event): Promise<void> => {
    const file = (event.currentTarget as HTMLInputElement).files?.[0]
    if (file === undefined) return
    await attempt(await file.text())
  }

  const onSubmit = (event: Event): void => {
    event.preventDefault()
    const text = pasted.current?.value ?? ''
    if (text.trim() === '') {
      setProblem('Choose your key file, or paste its contents.')
      return
    }
    void attempt(text)
  }

  return (
    <main class="signin" aria-labelledby="signin-title">
      <div class="signin-card">
        <h1 id="signin-title">Weft console</h1>
        <p class="muted">
          Sign in with the key file of your human Principal, written by <code>weft principal add human NAME</code>. The key stays in this browser: it is imported so it cannot be read back, and it
          signs a one-time challenge.
        </p>
        {notice === undefined ? null : (
          <p class="notice" role="status" data-testid="signin-notice">
            {notice}
          </p>
        )}
        <form onSubmit={onSubmit} data-testid="signin-form">
          <label for="key-file">Key file</label>
          <input id="key-file" ref={fileInput} type="file" accept=".json,application/json" disabled={busy} onChange={(e) => void onFile(e)} data-testid="key-file" />
          <label for="key-text">Or paste the key file</label>
          <textarea id="key-text" ref={pasted} rows={5} spellcheck={false} autocomplete="off" disabled={busy} data-testid="key-text" />
          <button type="submit" class="primary" disabled={busy} data-testid="signin-submit">
            {busy ? 'Signing in…' : 'Sign in'}
          </button>
        </form>
        {problem === undefined ? null : (
          <p class="refusal" role="alert" data-testid="key-problem">
            {problem}
          </p>
        )}
        <RefusalNote refusal={refusal} testId="signin-refusal" />
      </div>
    </main>
  )
}
