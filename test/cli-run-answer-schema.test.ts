// `codecall run --answer-schema FILE` (issue 23), the built CLI as a child process against the scripted model
// server: the schema goes to the model as `response_format`, the answer is printed as its parsed value, and a schema
// that does not compile is refused before the model is asked.
import { join } from 'node:path';
import { writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reply, startScriptedModelServer } from './model/scripted-model-server.ts';
import type { ScriptedModelServer } from './model/scripted-model-server.ts';
import { assertBuilt, cliTestDir, codecall, lastJson } from './cli-fixture.ts';

const noModelEnv = { OPENAI_API_KEY: '', OPENAI_BASE_URL: '', MISTRAL_API_KEY: '' };
const SCHEMA = {
  type: 'object',
  properties: { city: { type: 'string' }, hot: { type: 'boolean' } },
  required: ['city', 'hot'],
  additionalProperties: false,
};

describe('codecall run --answer-schema', () => {
  let model: ScriptedModelServer;
  let dir: string;
  beforeAll(async () => {
    assertBuilt();
    model = await startScriptedModelServer();
    dir = await cliTestDir('cli-answer-schema');
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

  it('sends the schema and prints the parsed answer', async () => {
    const file = join(dir, 'answer.json');
    await writeFile(file, JSON.stringify(SCHEMA));
    model.push(reply({ content: '{"city":"Paris","hot":false}' }));
    const r = await codecall(
      noModelEnv,
      'run',
      'Is it hot in Paris?',
      '--answer-schema',
      file,
      ...flags(),
      '--json',
    );
    expect(r.code, r.stderr).toBe(0);
    const view = lastJson(r.stdout) as { result: { output: unknown } };
    expect(view.result.output).toEqual({ city: 'Paris', hot: false });
    const body = model.requests.at(-1)?.body as { response_format?: { json_schema?: { schema?: unknown } } };
    expect(body.response_format?.json_schema?.schema).toEqual(SCHEMA);
  });

  it('refuses a schema that does not compile, asking the model nothing', async () => {
    const file = join(dir, 'bad.json');
    await writeFile(file, JSON.stringify({ type: 'nope' }));
    const asked = model.requests.length;
    const r = await codecall(noModelEnv, 'run', 'x', '--answer-schema', file, ...flags());
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('answer_schema');
    expect(r.stderr).toContain('INVALID_ARGUMENT');
    expect(model.requests.length).toBe(asked);
  });
});
