import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../src/index.ts';
import { payTool, useApiFixture } from './api-fixture.ts';
import type { ApiKey, ErrorBody } from './api-fixture.ts';

// GET /api/v1/tools: the tools this server's programs may call (the console's Submit page lists them), with a
// key like every /api/v1 route and the error envelope without one.

interface ToolItem {
  name: string;
  namespace: string;
  description: string;
  effect: string;
  approval: string;
  input_schema: Record<string, unknown>;
}

describe('GET /api/v1/tools', () => {
  const read = defineTool({
    name: 'lookup',
    namespace: 'crm',
    description: 'Finds a customer.',
    input: z.object({ email: z.string() }),
    effect: 'read',
    execute: () => null,
  });
  const always = defineTool({
    name: 'wire',
    description: 'Wires money.',
    effect: 'unsafe',
    requiresApproval: true,
    execute: () => null,
  });
  const fx = useApiFixture('http-tools', { tools: [payTool(), read, always] });
  let key: ApiKey;
  beforeAll(async () => {
    key = await fx.key('tools-tenant');
  });

  it('lists every tool with its description, effect, approval and input schema', async () => {
    const res = await fx.app.inject({ url: '/api/v1/tools', headers: key.headers });
    expect(res.statusCode, res.body).toBe(200);
    const { tools } = res.json<{ tools: ToolItem[] }>();
    expect(tools.map((t) => t.name)).toEqual(['tools.pay', 'crm.lookup', 'tools.wire']);
    expect(tools[0]).toMatchObject({
      namespace: 'tools',
      description: 'pays; over 100 needs approval',
      effect: 'unsafe',
      approval: 'by_arguments',
    });
    expect(tools[1]).toMatchObject({ namespace: 'crm', effect: 'read', approval: 'never' });
    expect(tools[1]?.input_schema).toMatchObject({
      type: 'object',
      properties: { email: { type: 'string' } },
    });
    expect(tools[2]).toMatchObject({ approval: 'always' });
  });

  it('answers 401 in the error envelope without a key', async () => {
    const res = await fx.app.inject({ url: '/api/v1/tools' });
    expect(res.statusCode).toBe(401);
    expect(res.json<ErrorBody>().error.code).toBe('UNAUTHORIZED');
  });

  it('is documented in the OpenAPI document', async () => {
    const doc = (await fx.app.inject({ url: '/api/v1/openapi.json' })).json<{
      paths: Record<string, Record<string, { summary?: string; responses?: Record<string, unknown> }>>;
    }>();
    const op = doc.paths['/api/v1/tools']?.get;
    expect(op?.summary).toContain('tools');
    expect(Object.keys(op?.responses ?? {})).toEqual(expect.arrayContaining(['200', '4XX']));
  });
});
