// A tenant's default network access (issue 21): an operator gives a tenant's tasks that say nothing of
// network_access an allow list (`*`: the other tenants), held to the tenant's policy and applied at each run; a
// task's own access is its own, and `false` opts out. A real loopback server, quickjs and a SQLite store.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/durable/index.ts';
import { createEgress } from '../../src/egress/index.ts';
import { ToolRegistry } from '../../src/index.ts';
import type { Runtime } from '../../src/api/index.ts';
import type { TenantNetworkPolicies } from '../../src/spec/index.ts';
import { useDurableFixture } from './fixture.ts';
import { startRecordingServer } from './egress-test-server.ts';
import type { RecordingServer } from './egress-test-server.ts';

let server: RecordingServer;
beforeAll(async () => {
  server = await startRecordingServer(() => false);
});
afterAll(() => server.close());

const PROGRAM = `
try { return (await fetch('http://127.0.0.1:' + input.port + '/count')).status; }
catch (e) { return e.code + ' ' + e.details.reason; }`;

describe('default network access per tenant', () => {
  const fx = useDurableFixture('egress-defaults');
  const runtimes: Runtime[] = [];
  afterEach(async () => {
    await Promise.all(runtimes.splice(0).map((r) => r.close()));
  });
  const make = (defaults: TenantNetworkPolicies, policies?: TenantNetworkPolicies): Runtime => {
    const r = createRuntime({
      store: fx.store,
      drivers: [fx.driver],
      tools: new ToolRegistry([]),
      pollMs: 20,
      egress: createEgress({ allowPrivate: true }),
      egressDefaults: defaults,
      ...(policies ? { egressPolicies: policies } : {}),
    });
    runtimes.push(r);
    r.start();
    return r;
  };
  const fetched = async (runtime: Runtime, tenant: string, networkAccess?: unknown): Promise<unknown> => {
    const task = await runtime.submit({
      code: `const input = { port: ${server.port} };\n${PROGRAM}`,
      tenant,
      ...(networkAccess === undefined ? {} : { constraints: { networkAccess: networkAccess as false } }),
    });
    const done = await runtime.wait(task.task_id);
    return done.result?.output;
  };

  it("gives a task that says nothing its tenant's default; false and the task's own access are the task's", async () => {
    const here = { allow: [`127.0.0.1:${server.port}`], allowHttp: true };
    const runtime = make({ acme: here, '*': { allow: ['api.example.com'], allowHttp: true } });
    expect(await fetched(runtime, 'acme')).toBe(200);
    // Another tenant's default does not reach the server; false opts out of acme's.
    expect(await fetched(runtime, 'other')).toBe('EGRESS_REFUSED not_allowed');
    expect(await fetched(runtime, 'acme', false)).toBe('EGRESS_REFUSED no_network_access');
    expect(await fetched(runtime, 'acme', { allow: ['api.example.com'], allowHttp: true })).toBe(
      'EGRESS_REFUSED not_allowed',
    );
    expect(await fetched(runtime, 'other', here)).toBe(200);
  });

  it("holds the default to the tenant's policy as it is at the run", async () => {
    const here = { allow: [`127.0.0.1:${server.port}`], allowHttp: true };
    const runtime = make({ acme: here }, { acme: { allow: ['*.acme.com'], allowHttp: true } });
    expect(await fetched(runtime, 'acme')).toBe('EGRESS_REFUSED not_allowed');
  });
});
