import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { Api } from './api.ts';
import { ErrorBox } from './error-box.tsx';
import type { Me } from './types.ts';
import { useAction } from './use-action.ts';

/** Paste an API key; it is checked with GET /api/v1/me before it is kept (for this browser tab only). */
export function SignIn(props: { onSignedIn: (api: Api, me: Me) => void }): JSX.Element {
  const [key, setKey] = useState('');
  const { busy, error, run } = useAction();
  const submit = (e: Event): Promise<void> => {
    e.preventDefault();
    return run(async () => {
      const api = new Api(key.trim());
      props.onSignedIn(api, await api.me());
    });
  };
  return (
    <main class="sign-in">
      <h1>codecall console</h1>
      <form onSubmit={(e) => void submit(e)} data-testid="sign-in-form">
        <label for="api-key">API key</label>
        <input
          id="api-key"
          type="password"
          autocomplete="off"
          placeholder="cc_..."
          value={key}
          onInput={(e) => setKey(e.currentTarget.value)}
          data-testid="api-key"
          required
        />
        <button type="submit" disabled={busy || key.trim() === ''} data-testid="sign-in">
          Sign in
        </button>
        <p class="muted">
          The key stays in this tab (sessionStorage) and goes only to this server, as
          <code> Authorization: Bearer</code>.
        </p>
        <ErrorBox error={error} testid="sign-in-error" />
      </form>
    </main>
  );
}
