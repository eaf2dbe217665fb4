// What the Python egress tests share: one python driver and one SQLite store per file, and runtimes on them with an
// egress that may reach loopback (the test server), closed after each test. Call it inside the file's describe.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { createRuntime } from '../../src/durable/index.ts';
import { createEgress } from '../../src/egress/index.ts';
import type { EgressOptions } from '../../src/egress/index.ts';
import { ToolRegistry } from '../../src/index.ts';
import type { Runtime } from '../../src/api/index.ts';
import type { NetworkAccess, TaskStore } from '../../src/internal.ts';
import { createPythonDriver } from '../../src/sandbox/index.ts';
import type { PythonDriver, PythonProbe } from '../../src/sandbox/index.ts';
import { createSqliteTaskStore } from '../../src/store/index.ts';

export interface PythonEgress {
  /** A started runtime on the file's store and driver (closed after the test). */
  readonly make: () => Runtime;
  /** `tool_constraints` allowing the test server at `port()` over plain http, and `extra` network access fields. */
  readonly access: (extra?: Partial<NetworkAccess>) => { networkAccess: NetworkAccess };
  readonly store: () => TaskStore;
}

export function usePythonEgress(options: {
  readonly probe: PythonProbe;
  readonly port: () => number;
  readonly dirPrefix: string;
  /** The egress's options beside `allowPrivate` (secrets, say), read when a runtime is made. */
  readonly egress?: () => EgressOptions;
}): PythonEgress {
  let driver: PythonDriver;
  let store: TaskStore;
  let dir: string;
  beforeAll(async () => {
    driver = createPythonDriver({ warm: 1, ...(options.probe.ok ? { probe: options.probe } : {}) });
    dir = await mkdtemp(join(tmpdir(), options.dirPrefix));
    store = await createSqliteTaskStore({ path: join(dir, 'tasks.db') });
  });
  afterAll(async () => {
    await store.close();
    await driver.close();
    await rm(dir, { recursive: true, force: true });
  });
  const runtimes: Runtime[] = [];
  afterEach(async () => {
    await Promise.all(runtimes.splice(0).map((r) => r.close()));
  });
  return {
    make: () => {
      const r = createRuntime({
        store,
        drivers: [driver],
        tools: new ToolRegistry([]),
        pollMs: 20,
        egress: createEgress({ allowPrivate: true, ...options.egress?.() }),
      });
      r.start();
      runtimes.push(r);
      return r;
    },
    access: (extra = {}) => ({
      networkAccess: { allow: [`127.0.0.1:${options.port()}`], allowHttp: true, ...extra },
    }),
    store: () => store,
  };
}
