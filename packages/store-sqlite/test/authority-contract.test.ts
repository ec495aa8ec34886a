/**
 * The Authority store contract suite (`@weft/testkit/authority-store-contract`), run against the
 * SQLite store: whatever the memory store of @weft/authority answers, this store answers the same.
 */
import { describeAuthorityStoreContract } from '@weft/testkit/authority-store-contract'
import { openSqliteAuthorityStore } from '../src/index.js'

const open = () => openSqliteAuthorityStore(':memory:')
describeAuthorityStoreContract('sqlite', open, { checkpointing: open })
