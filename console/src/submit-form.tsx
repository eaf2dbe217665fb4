import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import type { Api } from './api.ts';
import { ErrorBox } from './error-box.tsx';
import { go } from './use-route.ts';

const list = (text: string): string[] | undefined => {
  const items = text
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter((s) => s !== '');
  return items.length > 0 ? items : undefined;
};
const num = (text: string): number | undefined => (text.trim() === '' ? undefined : Number(text));

/** A task as POST /api/v1/tasks takes it: code (exec mode) or an instruction (agent mode), with its limits. */
export function SubmitForm(props: { api: Api }): JSX.Element {
  const [kind, setKind] = useState<'code' | 'instruction'>('code');
  const [language, setLanguage] = useState('javascript');
  const [text, setText] = useState('');
  const [mode, setMode] = useState('code');
  const [maxSteps, setMaxSteps] = useState('');
  const [session, setSession] = useState('');
  const [tools, setTools] = useState('');
  const [timeout, setTimeout_] = useState('');
  const [memory, setMemory] = useState('');
  const [libraries, setLibraries] = useState('');
  const [priority, setPriority] = useState('');
  const [maxRetries, setMaxRetries] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event): Promise<void> => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    const constraints = {
      ...(num(timeout) === undefined ? {} : { timeout_seconds: num(timeout) }),
      ...(num(memory) === undefined ? {} : { max_memory_mb: num(memory) }),
      ...(list(libraries) ? { allowed_libraries: list(libraries) } : {}),
    };
    const body = {
      [kind]: text,
      language,
      ...(kind === 'instruction'
        ? { mode, ...(num(maxSteps) === undefined ? {} : { max_steps: num(maxSteps) }) }
        : {}),
      ...(session.trim() ? { session_id: session.trim() } : {}),
      ...(list(tools) ? { tools: list(tools) } : {}),
      ...(num(priority) === undefined ? {} : { priority: num(priority) }),
      ...(num(maxRetries) === undefined ? {} : { max_retries: num(maxRetries) }),
      ...(Object.keys(constraints).length > 0 ? { tool_constraints: constraints } : {}),
    };
    try {
      const created = await props.api.submit(body);
      go(`tasks/${encodeURIComponent(created.task_id)}`);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section>
      <h2>Submit a task</h2>
      <form class="submit" onSubmit={(e) => void submit(e)} data-testid="submit-form">
        <fieldset>
          <legend>Kind</legend>
          <label>
            <input
              type="radio"
              name="kind"
              checked={kind === 'code'}
              onChange={() => setKind('code')}
              data-testid="kind-code"
            />{' '}
            Code (run this program)
          </label>
          <label>
            <input
              type="radio"
              name="kind"
              checked={kind === 'instruction'}
              onChange={() => setKind('instruction')}
              data-testid="kind-instruction"
            />{' '}
            Instruction (a model writes the code)
          </label>
        </fieldset>
        <label>
          Language
          <select
            value={language}
            onChange={(e) => setLanguage(e.currentTarget.value)}
            data-testid="language"
          >
            <option value="javascript">JavaScript</option>
            <option value="typescript">TypeScript</option>
            <option value="python">Python</option>
          </select>
        </label>
        <label>
          {kind === 'code' ? 'Program' : 'Instruction'}
          <textarea
            rows={12}
            value={text}
            onInput={(e) => setText(e.currentTarget.value)}
            spellcheck={false}
            required
            data-testid="program"
            placeholder={
              kind === 'code' ? 'return await tools.get_weather({ city: "Paris" });' : 'What to do'
            }
          />
        </label>
        {kind === 'instruction' ? (
          <div class="row">
            <label>
              Mode
              <select value={mode} onChange={(e) => setMode(e.currentTarget.value)} data-testid="mode">
                <option value="code">code</option>
                <option value="function_calling">function_calling</option>
              </select>
            </label>
            <label>
              Max steps
              <input
                type="number"
                min={1}
                max={100}
                value={maxSteps}
                onInput={(e) => setMaxSteps(e.currentTarget.value)}
                data-testid="max-steps"
              />
            </label>
          </div>
        ) : null}
        <div class="row">
          <label>
            Session
            <input value={session} onInput={(e) => setSession(e.currentTarget.value)} data-testid="session" />
          </label>
          <label>
            Tools allowed (names, comma separated; empty: all)
            <input value={tools} onInput={(e) => setTools(e.currentTarget.value)} data-testid="tools" />
          </label>
        </div>
        <div class="row">
          <label>
            Timeout (s)
            <input
              type="number"
              min={0}
              step="any"
              value={timeout}
              onInput={(e) => setTimeout_(e.currentTarget.value)}
              data-testid="timeout"
            />
          </label>
          <label>
            Memory (MiB)
            <input
              type="number"
              min={2}
              step="any"
              value={memory}
              onInput={(e) => setMemory(e.currentTarget.value)}
              data-testid="memory"
            />
          </label>
          <label>
            Allowed libraries (Python)
            <input
              value={libraries}
              onInput={(e) => setLibraries(e.currentTarget.value)}
              data-testid="libraries"
            />
          </label>
          <label>
            Priority
            <input
              type="number"
              min={-100}
              max={100}
              value={priority}
              onInput={(e) => setPriority(e.currentTarget.value)}
              data-testid="priority"
            />
          </label>
          <label>
            Retries
            <input
              type="number"
              min={0}
              max={10}
              value={maxRetries}
              onInput={(e) => setMaxRetries(e.currentTarget.value)}
              data-testid="max-retries"
            />
          </label>
        </div>
        <button type="submit" disabled={busy || text.trim() === ''} data-testid="submit">
          Submit
        </button>
        <ErrorBox error={error} testid="submit-error" />
      </form>
    </section>
  );
}
