/**
 * The Authority store contract suite (`@weft/testkit/authority-store-contract`), run against the
 * memory store: the reference every durable store (`@weft/store-sqlite`) is held to.
 */
import { describeAuthorityStoreContract } from '@weft/testkit/authority-store-contract'
import { createMemoryStore } from '../src/log/store.js'

describeAuthorityStoreContract('memory', createMemoryStore, { checkpointing: () => createMemoryStore({ checkpoints: true }) })
