/**
 * Provides the tests with a PostgreSQL URL: `WEFT_PG_URL` when set, else a throwaway server for this
 * run, stopped after it (see `pg-server.ts`).
 */
import type { TestProject } from 'vitest/node'
import { testServer } from './pg-server.js'

declare module 'vitest' {
  export interface ProvidedContext {
    pgUrl: string
  }
}

export default function setup(project: TestProject): () => void {
  const server = testServer()
  project.provide('pgUrl', server.url)
  return () => server.stop()
}
