import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import type { Api } from './api.ts';
import { ErrorBox } from './error-box.tsx';
import { ToolList } from './tool-list.tsx';
import { useAction } from './use-action.ts';
import { go } from './use-route.ts';

const list = (text: string): string[] | undefined => {
  const items = text
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter((s) => s !== '');
  return items.length > 0 ? items : undefined;
};
const num = (text: string): number | undefined => (text.trim() === '' ? undefined : Number(text));
/** `{ [key]: value }`, or nothing when the field was left empty. */
const opt = <T,>(key: string, value: T | undefined): Record<string, T> =>
  value === undefined ? {} : { [key]: value };

/** A labelled text (or number) input bound to one string of state. */
function Field(
  props: {
    label: string;
    value: string;
    onValue: (value: string) => void;
    testid: string;
  } & Pick<JSX.InputHTMLAttributes<HTMLInputElement>, 'type' | 'min' | 'max' | 'step' | 'placeholder'>,
): JSX.Element {
  const { label, value, onValue, testid, ...rest } = props;
  return (
    <label>
      {label}
      <input {...rest} value={value} onInput={(e) => onValue(e.currentTarget.value)} data-testid={testid} />
    </label>
  );
}

/** The allow-list text with `name` added (once). */
const withName = (text: string, name: string): string => {
  const names = list(text) ?? [];
  return names.includes(name) ? text : [...names, name].join(', ');
};

type Kind = 'code' | 'instruction';

/** A task as POST /api/v1/tasks takes it: code (exec mode) or an instruction (agent mode), with its limits. */
export function SubmitForm(props: { api: Api }): JSX.Element {
  const [kind, setKind] = useState<Kind>('code');
  const [language, setLanguage] = useState('javascript');
  const [text, setText] = useState('');
  const [mode, setMode] = useState('code');
  const [maxSteps, setMaxSteps] = useState('');
  const [session, setSession] = useState('');
  const [tools, setTools] = useState('');
  const [timeout, setTimeout_] = useState('');
  const [memory, setMemory] = useState('');
  const [libraries, setLibraries] = useState('');
  const [network, setNetwork] = useState('');
  const [priority, setPriority] = useState('');
  const [maxRetries, setMaxRetries] = useState('');
  const { busy, error, run } = useAction();

  const submit = (e: Event): Promise<void> => {
    e.preventDefault();
    const constraints = {
      ...opt('timeout_seconds', num(timeout)),
      ...opt('max_memory_mb', num(memory)),
      ...opt('allowed_libraries', list(libraries)),
      ...opt('network_access', list(network) ? { allow: list(network) } : undefined),
    };
    const body = {
      [kind]: text,
      language,
      ...(kind === 'instruction' ? { mode, ...opt('max_steps', num(maxSteps)) } : {}),
      ...opt('session_id', session.trim() || undefined),
      ...opt('tools', list(tools)),
      ...opt('priority', num(priority)),
      ...opt('max_retries', num(maxRetries)),
      ...(Object.keys(constraints).length > 0 ? { tool_constraints: constraints } : {}),
    };
    return run(async () => {
      const created = await props.api.submit(body);
      go(`tasks/${encodeURIComponent(created.task_id)}`);
    });
  };

  const kindChoice = (value: Kind, label: string): JSX.Element => (
    <label>
      <input
        type="radio"
        name="kind"
        checked={kind === value}
        onChange={() => setKind(value)}
        data-testid={`kind-${value}`}
      />{' '}
      {label}
    </label>
  );

  return (
    <section>
      <h2>Submit a task</h2>
      <form class="submit" onSubmit={(e) => void submit(e)} data-testid="submit-form">
        <fieldset>
          <legend>Kind</legend>
          {kindChoice('code', 'Code (run this program)')}
          {kindChoice('instruction', 'Instruction (a model writes the code)')}
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
            <Field
              label="Max steps"
              type="number"
              min={1}
              max={100}
              value={maxSteps}
              onValue={setMaxSteps}
              testid="max-steps"
            />
          </div>
        ) : null}
        <div class="row">
          <Field label="Session" value={session} onValue={setSession} testid="session" />
          <Field
            label="Tools allowed (names, comma separated; empty: all)"
            value={tools}
            onValue={setTools}
            testid="tools"
          />
        </div>
        <div class="row">
          <Field
            label="Timeout (s)"
            type="number"
            min={0}
            step="any"
            value={timeout}
            onValue={setTimeout_}
            testid="timeout"
          />
          <Field
            label="Memory (MiB)"
            type="number"
            min={2}
            step="any"
            value={memory}
            onValue={setMemory}
            testid="memory"
          />
          <Field
            label="Allowed libraries (Python)"
            placeholder="json, os.path, numpy.*"
            value={libraries}
            onValue={setLibraries}
            testid="libraries"
          />
          <Field
            label="Network: hosts fetch may reach"
            placeholder="api.example.com, *.example.org"
            value={network}
            onValue={setNetwork}
            testid="network"
          />
          <Field
            label="Priority"
            type="number"
            min={-100}
            max={100}
            value={priority}
            onValue={setPriority}
            testid="priority"
          />
          <Field
            label="Retries"
            type="number"
            min={0}
            max={10}
            value={maxRetries}
            onValue={setMaxRetries}
            testid="max-retries"
          />
        </div>
        <button type="submit" disabled={busy || text.trim() === ''} data-testid="submit">
          Submit
        </button>
        <ErrorBox error={error} testid="submit-error" />
      </form>
      <ToolList
        api={props.api}
        allowed={list(tools) ?? []}
        onAllow={(name) => setTools((now) => withName(now, name))}
      />
    </section>
  );
}
