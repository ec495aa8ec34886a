/**
 * The console shell: sign-in, then a top bar (Organization, person, connection state), the list
 * of visible Groups (§8) on the left and the opened Mission on the right.
 * @module
 */
import { useEffect, useState } from 'preact/hooks'
import type { ConsoleGroup } from '../../shared/sign-in.js'
import { refusalOf, type Refusal } from '../errors.js'
import type { SignedIn } from '../session.js'
import { RefusalNote, shortId, StateBadge } from './common.js'
import { MissionForm } from './Directives.js'
import { MissionView } from './MissionView.js'
import { SignInScreen } from './SignIn.js'

export function App() {
  const [session, setSession] = useState<SignedIn | undefined>(undefined)
  const [notice, setNotice] = useState<string | undefined>(undefined)
  useEffect(() => {
    if (session === undefined) return
    return session.onEnded((reason) => {
      setSession(undefined)
      setNotice(reason)
    })
  }, [session])
  if (session === undefined)
    return (
      <SignInScreen
        notice={notice}
        onSignedIn={(s) => {
          setNotice(undefined)
          setSession(s)
        }}
      />
    )
  return <Console session={session} />
}

const CONNECTION_LABELS: Readonly<Record<string, string>> = { connecting: 'Connecting…', open: 'Connected', reconnecting: 'Reconnecting…', closed: 'Disconnected' }

/** Which main panel shows: a Group, or the new-Mission form (optionally a follow-up). */
type Selection =
  | { readonly kind: 'group'; readonly groupId: string }
  | { readonly kind: 'new'; readonly followUpTo?: { readonly missionId: string; readonly title: string } }
  | { readonly kind: 'none' }

function Console({ session }: { readonly session: SignedIn }) {
  const [, setTick] = useState(0)
  const [selection, setSelection] = useState<Selection>({ kind: 'none' })
  const [refusal, setRefusal] = useState<Refusal | undefined>(undefined)
  useEffect(() => session.onChange(() => setTick((n) => n + 1)), [session])
  const refresh = async (): Promise<void> => {
    try {
      setRefusal(undefined)
      await session.refreshGroups()
    } catch (error) {
      setRefusal(refusalOf(error))
    }
  }
  useEffect(() => {
    void refresh()
  }, [session])

  const status = session.connection()
  const groups = session.groups()
  const openGroup = (groupId: string): void => {
    session.open(groupId)
    setSelection({ kind: 'group', groupId })
  }

  return (
    <div class="shell">
      <header class="topbar" data-testid="topbar">
        <span class="brand">Weft console</span>
        <span class="org" title={session.organizationId}>
          <span class="label">Organization</span> {session.organizationId}
        </span>
        <span class="spacer" />
        <span class={`conn conn-${status}`} role="status" aria-live="polite" data-testid="connection-state">
          <span class="dot" aria-hidden="true" />
          {CONNECTION_LABELS[status] ?? status}
        </span>
        <span class="person" title={session.person.id} data-testid="person">
          {session.person.id}
        </span>
        <button type="button" class="ghost" onClick={() => void session.signOut()} data-testid="sign-out">
          Sign out
        </button>
      </header>
      <nav class="sidebar" aria-labelledby="groups-title">
        <div class="sidebar-head">
          <h2 id="groups-title">Missions</h2>
          <button type="button" class="ghost small" onClick={() => void refresh()} aria-label="Refresh the list of Missions" data-testid="refresh-groups">
            Refresh
          </button>
        </div>
        <button type="button" class="primary block" onClick={() => setSelection({ kind: 'new' })} data-testid="new-mission">
          New Mission
        </button>
        <RefusalNote refusal={refusal} />
        <ul class="group-list" data-testid="group-list">
          {groups.length === 0 ? <li class="muted empty">No Missions visible to you yet.</li> : null}
          {groups.map((g) => (
            <GroupEntry key={g.groupId} group={g} session={session} current={selection.kind === 'group' && selection.groupId === g.groupId} onOpen={openGroup} />
          ))}
        </ul>
        <OpenById onOpen={openGroup} />
      </nav>
      <main class="main">
        {selection.kind === 'group' ? (
          <MissionView key={selection.groupId} session={session} groupId={selection.groupId} onFollowUp={(missionId, title) => setSelection({ kind: 'new', followUpTo: { missionId, title } })} />
        ) : selection.kind === 'new' ? (
          <MissionForm
            session={session}
            {...(selection.followUpTo === undefined ? {} : { followUpTo: selection.followUpTo })}
            onCreated={(groupId) => {
              void refresh()
              openGroup(groupId)
            }}
            onCancel={() => setSelection({ kind: 'none' })}
          />
        ) : (
          <section class="placeholder">
            <h1>Choose a Mission</h1>
            <p class="muted">Open a Mission from the list to follow it live, or create a new one.</p>
          </section>
        )}
      </main>
    </div>
  )
}

function GroupEntry({ group, session, current, onOpen }: { readonly group: ConsoleGroup; readonly session: SignedIn; readonly current: boolean; readonly onOpen: (groupId: string) => void }) {
  // An opened Group's live state wins over the list's snapshot.
  const live = session.opened(group.groupId)?.view
  const state = live?.missionState ?? group.missionState
  const title = live?.title ?? group.title ?? shortId(group.missionId ?? group.groupId)
  return (
    <li>
      <button
        type="button"
        class={`group-item${current ? ' current' : ''}`}
        aria-current={current ? 'page' : undefined}
        onClick={() => onOpen(group.groupId)}
        data-testid="group-item"
        data-group-id={group.groupId}
      >
        <span class="group-title">{title}</span>
        <span class="group-meta">
          <StateBadge state={state} />
          {group.role === undefined ? null : <span class="muted small">{group.role.replace(/_/g, ' ')}</span>}
        </span>
      </button>
    </li>
  )
}

/** Opening a Group by ID: the server answers GROUP_NOT_FOUND alike for hidden and absent ones (§17.2). */
function OpenById({ onOpen }: { readonly onOpen: (groupId: string) => void }) {
  const [value, setValue] = useState('')
  return (
    <form
      class="open-by-id"
      onSubmit={(e) => {
        e.preventDefault()
        if (value.trim() !== '') onOpen(value.trim())
      }}
    >
      <label for="open-group-id">Open a Group by ID</label>
      <div class="row">
        <input id="open-group-id" value={value} onInput={(e) => setValue((e.currentTarget as HTMLInputElement).value)} placeholder="urn:…" data-testid="open-group-id" />
        <button type="submit" class="ghost small">
          Open
        </button>
      </div>
    </form>
  )
}
