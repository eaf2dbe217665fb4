// The constraint of a request in each provider's form (ADR 0057), checked against example request bodies written
// from each provider's documentation (test/model/fixtures/constraints, each citing its page), through a real
// scripted HTTP server on loopback that records the body the client sent.
import { readdirSync, readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { grammarToGbnf, schemaToGrammar } from '../../src/grammar/index.ts';
import { createOpenAiClient } from '../../src/model/index.ts';
import type { ModelProvider, ModelWarning, ResponseConstraint } from '../../src/model/index.ts';
import type { ModelRequest } from '../../src/spec/index.ts';
import { reply, startScriptedModelServer, type ScriptedModelServer } from './scripted-model-server.ts';

interface Fixture {
  readonly provider: ModelProvider;
  readonly responseConstraint?: ResponseConstraint;
  readonly source: readonly string[];
  readonly request: ModelRequest & { readonly model: string };
  readonly body: Record<string, unknown>;
}

const dir = new URL('./fixtures/constraints/', import.meta.url);
const fixtures = readdirSync(dir)
  .filter((f) => f.endsWith('.json'))
  .map((f) => [f, JSON.parse(readFileSync(new URL(f, dir), 'utf8')) as Fixture] as const);

/** Every field any form uses: a body has the one its provider takes and none of the others. */
const CONSTRAINT_FIELDS = [
  'response_format',
  'json_schema',
  'grammar',
  'structured_outputs',
  'guided_json',
  'format',
];

describe('constraints in each provider’s form', () => {
  let server: ScriptedModelServer;
  let warnings: ModelWarning[];
  beforeEach(async () => {
    server = await startScriptedModelServer();
    warnings = [];
  });
  afterEach(async () => {
    await server.close();
  });

  function client(provider: ModelProvider, responseConstraint?: ResponseConstraint) {
    return createOpenAiClient({
      baseUrl: server.baseUrl,
      model: 'default-model',
      provider,
      retryBaseMs: 1,
      onWarning: (w) => warnings.push(w),
      ...(responseConstraint === undefined ? {} : { responseConstraint }),
    });
  }

  it('has a fixture for every provider', () => {
    expect(new Set(fixtures.map(([, f]) => f.provider))).toEqual(
      new Set(['openai', 'mistral', 'vllm', 'ollama', 'llamacpp']),
    );
    for (const [, f] of fixtures) expect(f.source.length).toBeGreaterThan(0);
  });

  it.each(fixtures)('%s: the body is the documented example', async (_name, fixture) => {
    server.push(reply({ content: '{}' }));
    await client(fixture.provider, fixture.responseConstraint).complete(fixture.request);
    const sent = server.requests[0]?.body ?? {};
    expect(sent).toMatchObject(fixture.body);
    const used = CONSTRAINT_FIELDS.filter((field) => field in fixture.body);
    for (const field of CONSTRAINT_FIELDS) expect(field in sent, field).toBe(used.includes(field));
    expect(warnings).toEqual([]);
  });

  it('llama.cpp with responseConstraint grammar: our GBNF export of the schema, warning of what it cannot enforce', async () => {
    const schema = {
      type: 'object',
      properties: { id: { type: 'string', format: 'uuid' }, n: { type: 'integer', multipleOf: 7 } },
      required: ['id'],
    };
    server.push(reply({ content: '{}' }));
    await client('llamacpp', 'grammar').complete({
      messages: [{ role: 'user', content: 'an id' }],
      responseFormat: { name: 'thing', schema },
    });
    const sent = server.requests[0]?.body ?? {};
    expect(sent.grammar).toBe(grammarToGbnf(schemaToGrammar(schema, { whitespace: 'flexible' }).grammar));
    expect(sent.grammar).toMatch(/^root ::= /m);
    expect('json_schema' in sent).toBe(false);
    expect(warnings.map((w) => w.code)).toEqual(['GRAMMAR_UNENFORCED']);
    expect(warnings[0]?.message).toContain('multipleOf');
  });

  it('OpenAI: a schema outside the strict subset goes non-strict, with a warning naming why', async () => {
    const open = {
      type: 'object',
      properties: { city: { type: 'string' }, days: { type: 'integer' } },
      required: ['city'],
    };
    server.push(reply({ content: '{}' }), reply({ content: '{}' }));
    const c = client('openai');
    await c.complete({
      messages: [{ role: 'user', content: 'x' }],
      responseFormat: { name: 'trip', schema: open },
    });
    expect(server.requests[0]?.body.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'trip', schema: open, strict: false },
    });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ code: 'STRICT_SCHEMA_FALLBACK' });
    expect(warnings[0]?.message).toMatch(/additionalProperties must be false/);

    await c.complete({
      messages: [{ role: 'user', content: 'x' }],
      tools: [
        {
          name: 'plan',
          description: 'plans',
          parameters: { ...open, additionalProperties: false },
          strict: true,
        },
      ],
    });
    const tools = server.requests[1]?.body.tools as { function: Record<string, unknown> }[];
    expect('strict' in (tools[0]?.function ?? {})).toBe(false);
    expect(warnings[1]?.message).toMatch(/tool plan .*every property must be required \(not: days\)/);
  });

  it('a preset without strict never sends it, and a form of none sends no constraint', async () => {
    server.push(reply({ content: '{}' }), reply({ content: '{}' }));
    const schema = { type: 'object', properties: {}, additionalProperties: false };
    await client('vllm').complete({
      messages: [{ role: 'user', content: 'x' }],
      tools: [{ name: 'f', description: 'f', parameters: schema, strict: true }],
    });
    const tools = server.requests[0]?.body.tools as { function: Record<string, unknown> }[];
    expect('strict' in (tools[0]?.function ?? {})).toBe(false);
    await client('openai', 'none').complete({
      messages: [{ role: 'user', content: 'x' }],
      responseFormat: { name: 'f', schema },
    });
    for (const field of CONSTRAINT_FIELDS) expect(field in (server.requests[1]?.body ?? {})).toBe(false);
  });
});
