import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PYTHON_GATHER_EXAMPLE } from '../src/agent/prompts.ts';
import { probePython } from '../src/sandbox/index.ts';
import { GUEST_LANGUAGES } from '../src/spec/index.ts';
import { reply, startScriptedModelServer } from './model/scripted-model-server.ts';
import type { ScriptedModelServer } from './model/scripted-model-server.ts';
import { assertBuilt, cliTestDir, codecall, lastJson } from './cli-fixture.ts';

const python = await probePython();

// No model from the machine's environment leaks into these runs.
const noModelEnv = { OPENAI_API_KEY: '', OPENAI_BASE_URL: '', MISTRAL_API_KEY: '' };

describe('codecall run (the built CLI, as a child process)', () => {
  let model: ScriptedModelServer;
  beforeAll(async () => {
    assertBuilt();
    model = await startScriptedModelServer();
  });
  afterAll(async () => {
    await model.close();
  });
  const flags = () => [
    '--provider',
    'openai',
    '--base-url',
    model.baseUrl,
    '--model',
    'scripted',
    '--api-key',
    'k',
  ];

  it('shows each step and prints the task view with the answer in result.output (--json)', async () => {
    model.push(
      reply({
        content:
          'Let me look.\n```js\nconst w = await tools.get_weather({ city: "Paris" });\nconsole.log("sky:", w.sky);\nw.temperature_c\n```',
      }),
      reply({ content: '```js\nfinal_answer({ city: w.city, hot: w.temperature_c > 30 })\n```' }),
    );
    const r = await codecall(
      noModelEnv,
      'run',
      'Is it hot in Paris?',
      '--tools',
      'examples/tools.ts',
      ...flags(),
      '--json',
    );
    expect(r.stderr).toContain('step 1: asking the model');
    expect(r.stderr).toContain('const w = await tools.get_weather');
    expect(r.stderr).toMatch(/-> tools\.get_weather\(\{"city":"Paris"\}\)/);
    expect(r.stderr).toContain('sky:');
    expect(r.stderr).toContain('step 2: ok (final answer)');
    expect(r.code).toBe(0);
    const view = lastJson(r.stdout) as {
      status: string;
      result: { output: unknown };
      steps: unknown[];
      mode: string;
    };
    expect(view.status).toBe('succeeded');
    expect(view.mode).toBe('code');
    expect(view.result.output).toEqual({ city: 'Paris', hot: false });
    expect(view.steps).toHaveLength(2);
  });

  it('runs function-calling mode', async () => {
    model.push(
      reply({ toolCalls: [{ id: 'c1', name: 'convert_temperature', arguments: '{"celsius": 100}' }] }),
      reply({ content: '100 °C is 212 °F.' }),
    );
    const r = await codecall(
      noModelEnv,
      'run',
      'Convert 100 C',
      '--tools',
      'examples/tools.ts',
      ...flags(),
      '--mode',
      'function_calling',
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('100 °C is 212 °F.');
    expect(r.stderr).toContain('calls convert_temperature({"celsius": 100})');
    expect(r.stderr).toMatch(/<- tools\.convert_temperature \d+ ms: \{"fahrenheit":212\}/);
    const sent = model.requests.at(-1)?.body.messages as { role: string; content: string }[];
    expect(sent.at(-1)).toMatchObject({ role: 'tool', content: '{"fahrenheit":212}' });
  });

  it('keeps the task in --db, where tasks show lists its steps', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'codecall-cli-run-'));
    const db = join(dir, 'tasks.db');
    model.push(
      reply({ content: '```js\nfinal_answer(await tools.convert_temperature({ celsius: 0 }))\n```' }),
    );
    const r = await codecall(
      noModelEnv,
      'run',
      'freezing in F?',
      '--tools',
      'examples/tools.ts',
      ...flags(),
      '--db',
      db,
      '--json',
    );
    expect(r.code).toBe(0);
    const { task_id } = lastJson(r.stdout) as { task_id: string };
    const show = await codecall(noModelEnv, 'tasks', 'show', task_id, '--db', db);
    expect(show.code).toBe(0);
    expect(show.stdout).toContain('instruction: freezing in F?');
    expect(show.stdout).toContain('step 1:      ok (final answer), 1 tool calls, scripted-model');
    expect(show.stdout).toContain('  | final_answer(await tools.convert_temperature({ celsius: 0 }))');
    expect(show.stdout).toContain('result:      { fahrenheit: 32 }');
  });

  it('says how to configure a model when none is', async () => {
    const r = await codecall(noModelEnv, 'run', 'anything');
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('MODEL_NOT_CONFIGURED');
    expect(r.stderr).toContain('OPENAI_API_KEY');
  });

  it('prints a string answer as it is and any other answer as JSON (without --json)', async () => {
    model.push(reply({ content: 'It is "mild":\n14 °C in Paris.' }));
    const text = await codecall(noModelEnv, 'run', 'Weather in Paris?', ...flags());
    expect(text.code).toBe(0);
    expect(text.stdout).toBe('It is "mild":\n14 °C in Paris.\n');
    model.push(reply({ content: '```js\nfinal_answer({ city: "Paris", temperature_c: 14 })\n```' }));
    const value = await codecall(noModelEnv, 'run', 'Weather in Paris, as data?', ...flags());
    expect(value.code).toBe(0);
    expect(JSON.parse(value.stdout)).toEqual({ city: 'Paris', temperature_c: 14 });
    // --json keeps the task view, the string in result.output.
    model.push(reply({ content: 'mild' }));
    const json = await codecall(noModelEnv, 'run', 'Weather in Paris?', ...flags(), '--json');
    expect(lastJson(json.stdout)).toMatchObject({ result: { output: 'mild' } });
  });

  it('lists every language in --help; --file is for Python tasks', async () => {
    const help = (await codecall(noModelEnv, 'run', '--help')).stdout.replace(/\s+/g, ' ');
    expect(help).toContain(
      `--language <language> the language the model writes: ${GUEST_LANGUAGES.join(', ')}`,
    );
    expect(help).toContain('--file <path> Python: an input file in the working directory');
    const js = await codecall(noModelEnv, 'run', 'x', ...flags(), '--file', 'package.json');
    expect(js.code).toBe(2);
    expect(js.stderr).toContain('--file puts input files in the working directory of Python programs');
    const missing = await codecall(
      noModelEnv,
      'run',
      'x',
      ...flags(),
      '--language',
      'python',
      '--file',
      'no/such.csv',
    );
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('input file not found: no/such.csv');
  });

  it('a 404 from the model server names the URL called and says the base URL usually ends in /v1', async () => {
    const noVersion = model.baseUrl.replace(/\/v1$/, '');
    const r = await codecall(
      noModelEnv,
      'run',
      'x',
      '--provider',
      'llamacpp',
      '--base-url',
      noVersion,
      '--model',
      'm',
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `MODEL_REQUEST_INVALID: the model server answered 404 (not found) to POST ${noVersion}/chat/completions: no route POST /chat/completions; the base URL usually ends in /v1: try ${noVersion}/v1`,
    );
  });

  it('refuses a bad --mode', async () => {
    const r = await codecall(noModelEnv, 'run', 'x', ...flags(), '--mode', 'telepathy');
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('--mode must be one of code, function_calling');
  });
});

describe.skipIf(!python.ok)(
  `codecall run --language python (the built CLI)${python.ok ? '' : ` (skipped: ${python.reason})`}`,
  () => {
    let model: ScriptedModelServer;
    let dir: string;
    beforeAll(async () => {
      assertBuilt();
      model = await startScriptedModelServer();
      dir = await cliTestDir('cli-run-python');
      // Tools a(x) and b(y), as the prompt's asyncio.gather example names them.
      await writeFile(
        join(dir, 'tools.js'),
        `import { defineTool } from 'codecall';
const number = (name) => ({ type: 'object', properties: { [name]: { type: 'number' } }, required: [name] });
export default [
  defineTool({ name: 'a', description: 'x + 10', input: number('x'), effect: 'read', execute: ({ x }) => x + 10 }),
  defineTool({ name: 'b', description: 'y + 20', input: number('y'), effect: 'read', execute: ({ y }) => y + 20 }),
];
`,
      );
      await writeFile(join(dir, 'data.csv'), 'city,temperature_c\nParis,14\nTokyo,21\n');
    });
    afterAll(async () => {
      await model.close();
      await rm(dir, { recursive: true, force: true });
    });
    const flags = () => ['--provider', 'vllm', '--base-url', model.baseUrl, '--model', 'scripted'];

    it('--file puts an input file in the working directory of the programs', async () => {
      model.push(
        reply({
          content:
            '```python\nimport csv\nrows = list(csv.DictReader(open("data.csv")))\nfinal_answer(max(rows, key=lambda r: int(r["temperature_c"]))["city"])\n```',
        }),
      );
      const r = await codecall(
        noModelEnv,
        'run',
        'Which city in data.csv is warmest?',
        ...flags(),
        '--language',
        'python',
        '--file',
        join(dir, 'data.csv'),
      );
      expect(r.stderr).toContain('step 1: ok (final answer)');
      expect(r.code).toBe(0);
      expect(r.stdout).toBe('Tokyo\n');
    });

    it("the system prompt's asyncio.gather example runs as written", async () => {
      model.push(
        reply({ content: `\`\`\`python\n${PYTHON_GATHER_EXAMPLE}\n\`\`\`` }),
        reply({ content: '```python\nfinal_answer([a, b])\n```' }),
      );
      const asked = model.requests.length;
      const r = await codecall(
        noModelEnv,
        'run',
        'Call a and b at once',
        ...flags(),
        '--language',
        'python',
        '--tools',
        join(dir, 'tools.js'),
        '--json',
      );
      const system = (model.requests[asked]?.body.messages as { role: string; content: string }[])[0];
      expect(system?.role).toBe('system');
      expect(system?.content).toContain(`\`\`\`python\n${PYTHON_GATHER_EXAMPLE}\n\`\`\``);
      expect(r.stderr).toContain('step 1: ok');
      expect(r.code).toBe(0);
      expect(lastJson(r.stdout)).toMatchObject({ status: 'succeeded', result: { output: [11, 22] } });
    });
  },
);
