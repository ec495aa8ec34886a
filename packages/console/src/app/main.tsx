/**
 * The console's browser entry: renders the app into `#app`. Nothing is put on `window`: the key,
 * the token and the client live in closures only.
 * @module
 */
import { render } from 'preact'
import { App } from './ui/App.js'

const root = document.getElementById('app')
if (root !== null) render(<App />, root)
