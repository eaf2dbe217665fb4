import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { Api } from './api.ts';
import { Approvals } from './approvals.tsx';
import { Dashboard } from './dashboard.tsx';
import { noun } from './plural.ts';
import { SignIn } from './sign-in.tsx';
import { SubmitForm } from './submit-form.tsx';
import { TaskDetail } from './task-detail.tsx';
import { TaskList } from './task-list.tsx';
import type { Me } from './types.ts';
import { useInbox } from './use-inbox.ts';
import { useTenantEvents } from './use-tenant-events.ts';
import type { Inbox } from './use-inbox.ts';
import { useRoute } from './use-route.ts';

const KEY = 'codecall.apiKey';

/** Signed in or not; then the header, the tabs and the page the hash names. */
export function App(): JSX.Element {
  const [session, setSession] = useState<{ api: Api; me: Me } | null>(null);
  const [checking, setChecking] = useState(() => sessionStorage.getItem(KEY) !== null);
  const route = useRoute();

  // A key kept from earlier in this tab is checked again (it may have been revoked).
  useEffect(() => {
    const kept = sessionStorage.getItem(KEY);
    if (kept === null) return;
    const api = new Api(kept);
    api
      .me()
      .then((me) => setSession({ api, me }))
      .catch(() => sessionStorage.removeItem(KEY))
      .finally(() => setChecking(false));
  }, []);

  if (checking) return <p class="muted">Checking the key…</p>;
  if (!session) {
    return (
      <SignIn
        onSignedIn={(api, me) => {
          sessionStorage.setItem(KEY, api.key);
          setSession({ api, me });
        }}
      />
    );
  }
  const signOut = (): void => {
    sessionStorage.removeItem(KEY);
    setSession(null);
  };
  return <Console api={session.api} me={session.me} route={route} signOut={signOut} />;
}

/** The signed-in console: the header (the Approvals tab with how many wait), the tabs and the page. */
function Console(props: { api: Api; me: Me; route: readonly string[]; signOut: () => void }): JSX.Element {
  const { api, me, signOut } = props;
  const events = useTenantEvents(api);
  const inbox = useInbox(api, events);
  const [page = 'tasks', id] = props.route;
  const tab = (name: string, label: string, extra?: JSX.Element | null): JSX.Element => (
    <a
      href={`#/${name}`}
      class={page === name && !(name === 'tasks' && id) ? 'tab active' : 'tab'}
      data-testid={`tab-${name}`}
    >
      {label}
      {extra}
    </a>
  );
  return (
    <>
      <header>
        <span class="brand">codecall</span>
        <nav>
          {tab('tasks', 'Tasks')}
          {tab('approvals', 'Approvals', <WaitingCount inbox={inbox} />)}
          {tab('submit', 'Submit')}
          {tab('dashboard', 'Dashboard')}
        </nav>
        <span class="who" data-testid="who">
          tenant <strong data-testid="tenant">{me.tenant}</strong> · {me.role}
          {me.key_id ? ` · key ${me.key_id}` : ''}
        </span>
        <button type="button" onClick={signOut} data-testid="sign-out">
          Sign out
        </button>
      </header>
      {me.auth === 'none' ? (
        <p class="error" role="alert" data-testid="no-auth">
          This server checks no API keys (--insecure-no-auth): every visitor is the admin of every tenant.
        </p>
      ) : null}
      <main>
        {page === 'tasks' && id ? (
          <TaskDetail api={api} id={id} key={id} />
        ) : page === 'approvals' ? (
          <Approvals api={api} inbox={inbox} />
        ) : page === 'submit' ? (
          <SubmitForm api={api} />
        ) : page === 'dashboard' ? (
          <Dashboard api={api} inbox={inbox} />
        ) : (
          <TaskList api={api} events={events} />
        )}
      </main>
    </>
  );
}

/** How many approvals wait (none: nothing shown); "100+" when more tasks wait than the inbox's first page. */
function WaitingCount(props: { inbox: Inbox }): JSX.Element | null {
  const n = props.inbox.items?.length ?? 0;
  if (n === 0) return null;
  const more = props.inbox.more ? '+' : '';
  return (
    <span
      class="count"
      title={`${n}${more} ${noun(n, 'approval')} ${noun(n, 'waits', 'wait')}`}
      data-testid="approvals-count"
    >
      {n}
      {more}
    </span>
  );
}
