import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CodecallError } from '../errors/index.ts';
import { defineTool } from './define-tool.ts';
import { ToolRegistry } from './tool-host.ts';

const signal = new AbortController().signal;

function registry(): ToolRegistry {
  return new ToolRegistry([
    defineTool({
      name: 'add',
      description: 'adds',
      input: z.object({ a: z.number(), b: z.number() }),
      output: z.object({ sum: z.number() }),
      effect: 'read',
      execute: ({ a, b }) => ({ sum: a + b }),
    }),
    defineTool({
      name: 'fail',
      description: 'throws',
      execute: () => {
        throw Object.assign(new Error('boom'), { code: 'E_BOOM' });
      },
    }),
    defineTool({ name: 'liar', description: 'bad output', output: { type: 'string' }, execute: () => 42 }),
  ]);
}

describe('defineTool', () => {
  it('defaults to the tools namespace and the unsafe effect', () => {
    const t = defineTool({ name: 'x', description: '', execute: () => 1 });
    expect(t.namespace).toBe('tools');
    expect(t.effect).toBe('unsafe');
    expect(t.inputSchema).toEqual({ type: 'object' });
  });

  it.each(['__proto__', 'constructor', 'then', '-lead', '1st', 'a.b', 'a b', 'x'.repeat(129), ''])(
    'refuses the name %j',
    (name) => {
      expect(() => defineTool({ name, description: '', execute: () => 1 })).toThrow(CodecallError);
    },
  );

  it.each(['lookup-user', 'get_$-x', 'x'.repeat(128)])('takes the name %j', (name) => {
    expect(defineTool({ name, description: '', execute: () => 1 }).name).toBe(name);
  });

  it("refuses '-' in a namespace (a namespace is a global)", () => {
    expect(() => defineTool({ name: 'x', namespace: 'my-tools', description: '', execute: () => 1 })).toThrow(
      /namespace "my-tools" must be a JavaScript identifier and not/,
    );
  });

  it('converts zod schemas to JSON Schema', () => {
    const t = defineTool({
      name: 'z',
      description: '',
      input: z.object({ q: z.string() }),
      execute: () => 1,
    });
    expect(t.inputSchema).toMatchObject({
      type: 'object',
      properties: { q: { type: 'string' } },
      required: ['q'],
    });
  });

  it('refuses duplicate tools and invalid schemas', () => {
    const t = defineTool({ name: 'dup', description: '', execute: () => 1 });
    expect(() => new ToolRegistry([t, t])).toThrow(/defined twice/);
    const bad = defineTool({
      name: 'bad',
      description: '',
      input: { type: 'no-such-type' },
      execute: () => 1,
    });
    expect(() => new ToolRegistry([bad])).toThrow(/invalid JSON Schema/);
  });
});

describe('ToolRegistry host', () => {
  it('runs a valid call', async () => {
    const out = await registry()
      .host()
      .call(
        { kind: 'tool', callId: 'call-1', namespace: 'tools', name: 'add', args: { a: 1, b: 2 } },
        signal,
      );
    expect(out).toEqual({ ok: true, value: { sum: 3 } });
  });

  it('names the field of a schema violation', async () => {
    const out = await registry()
      .host()
      .call({ kind: 'tool', callId: 'c', namespace: 'tools', name: 'add', args: { a: 1, b: 'x' } }, signal);
    expect(out.ok).toBe(false);
    if (!out.ok) {
      expect(out.error.code).toBe('TOOL_VALIDATION');
      expect(out.error.message).toContain('"b"');
      expect(out.error.details).toEqual({ field: 'b' });
    }
  });

  it('reports a missing required field by name', async () => {
    const out = await registry()
      .host()
      .call({ kind: 'tool', callId: 'c', namespace: 'tools', name: 'add', args: { a: 1 } }, signal);
    expect(!out.ok && out.error.message).toContain('"b" is required');
  });

  it('lists the available tools for an unknown one, including prototype names', async () => {
    for (const name of ['nope', 'constructor', '__proto__', 'hasOwnProperty']) {
      const out = await registry()
        .host()
        .call({ kind: 'tool', callId: 'c', namespace: 'tools', name, args: {} }, signal);
      expect(out.ok).toBe(false);
      if (!out.ok) {
        expect(out.error.code).toBe('NO_SUCH_TOOL');
        expect(out.error.message).toContain('add, fail, liar');
      }
    }
  });

  it('passes a thrown error code and message without the stack', async () => {
    const out = await registry()
      .host()
      .call({ kind: 'tool', callId: 'c', namespace: 'tools', name: 'fail', args: {} }, signal);
    expect(out).toEqual({ ok: false, error: { code: 'E_BOOM', message: 'boom', name: 'ToolError' } });
  });

  it('checks results against the output schema', async () => {
    const out = await registry()
      .host()
      .call({ kind: 'tool', callId: 'c', namespace: 'tools', name: 'liar', args: {} }, signal);
    expect(!out.ok && out.error.code).toBe('TOOL_RESULT_INVALID');
  });
});

describe('a tool that streams', () => {
  it('gives its last value as the result, and fails as the tool when it throws (an AI SDK async generator)', async () => {
    const tools = new ToolRegistry([
      defineTool({
        name: 'stream',
        description: 'yields',
        execute: async function* () {
          yield { step: 1 };
          await Promise.resolve();
          yield { step: 2 };
        },
      }),
      defineTool({
        name: 'broken',
        description: 'throws while streaming',
        execute: async function* () {
          yield await Promise.resolve(1);
          throw new Error('stream broke');
        },
      }),
    ]);
    const call = (name: string) =>
      tools.host().call({ kind: 'tool', callId: 'c', namespace: 'tools', name, args: {} }, signal);
    expect(await call('stream')).toEqual({ ok: true, value: { step: 2 } });
    const broken = await call('broken');
    expect(broken.ok === false && broken.error.message).toBe('stream broke');
  });
});
