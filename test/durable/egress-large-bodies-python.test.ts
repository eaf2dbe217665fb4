// Large fetch responses out of line (ADR 0046) from a Python task: codecall.fetch's read(n) and urllib's
// response.read(n) stream a body the host stored, by ranges; a resumed task reads the same bytes from the store and
// the server is not asked again. The python driver (bubblewrap), the runtime and a SQLite store.
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/durable/index.ts';
import { createEgress } from '../../src/egress/index.ts';
import { ToolRegistry } from '../../src/index.ts';
import type { Runtime, TaskView } from '../../src/api/index.ts';
import type { TaskStore } from '../../src/internal.ts';
import { createPythonDriver, probePython } from '../../src/sandbox/index.ts';
import type { PythonDriver } from '../../src/sandbox/index.ts';
import { createSqliteTaskStore } from '../../src/store/index.ts';
import { startRecordingServer } from './egress-test-server.ts';
import type { RecordingServer } from './egress-test-server.ts';

const probe = await probePython();
const SIZE = 3 * 1024 * 1024 + 5;
const data = Buffer.alloc(SIZE);
for (let i = 0, x = 3; i < SIZE; i++) {
  x = (x * 1103515245 + 12345) >>> 0;
  data[i] = x >>> 24;
}
const sha = createHash('sha256').update(data).digest('hex');

let server: RecordingServer;
let port = 0;
const hits = () => server.seen.filter((s) => s.url === '/large').length;
beforeAll(async () => {
  server = await startRecordingServer((req, _raw, res) => {
    if (req.url !== '/large') return false;
    res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(data);
    return true;
  });
  port = server.port;
});
afterAll(() => server.close());

describe.skipIf(!probe.ok)(
  `large bodies in a Python task${probe.ok ? '' : ` (skipped: ${probe.reason})`}`,
  () => {
    let driver: PythonDriver;
    let store: TaskStore;
    let dir: string;
    beforeAll(async () => {
      driver = createPythonDriver({ warm: 1, ...(probe.ok ? { probe } : {}) });
      dir = await mkdtemp(join(tmpdir(), 'codecall-bodies-python-'));
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
    const make = (): Runtime => {
      const r = createRuntime({
        store,
        drivers: [driver],
        tools: new ToolRegistry([]),
        pollMs: 20,
        egress: createEgress({ allowPrivate: true }),
      });
      r.start();
      runtimes.push(r);
      return r;
    };
    const access = () => ({ networkAccess: { allow: [`127.0.0.1:${port}`], allowHttp: true } });
    const output = (view: TaskView): unknown => (view.result as { output?: unknown } | null)?.output;

    it('codecall.fetch and urllib stream a stored body; its SHA-256 is the server’s', async () => {
      const runtime = make();
      const task = await runtime.submit({
        language: 'python',
        constraints: access(),
        code: `
import hashlib, urllib.request
from codecall import fetch
r = fetch('http://127.0.0.1:${port}/large')
h = hashlib.sha256()
for chunk in r.iter_bytes(100000):
    h.update(chunk)
u = urllib.request.urlopen('http://127.0.0.1:${port}/large')
g = hashlib.sha256()
n = 0
while True:
    part = u.read(70000)
    if not part:
        break
    n += len(part)
    g.update(part)
{'fetch': h.hexdigest(), 'urllib': g.hexdigest(), 'n': n, 'whole': len(fetch('http://127.0.0.1:${port}/large').content)}`,
      });
      const done = await runtime.wait(task.task_id, { until: 'terminal' });
      expect(done).toMatchObject({ status: 'succeeded' });
      expect(output(done)).toEqual({ fetch: sha, urllib: sha, n: SIZE, whole: SIZE });
    });

    it('a resumed task reads the same bytes from the store; the server is not asked again', async () => {
      const runtime = make();
      const before = hits();
      const task = await runtime.submit({
        language: 'python',
        constraints: access(),
        code: `
import hashlib
from codecall import fetch
r = fetch('http://127.0.0.1:${port}/large')
h = hashlib.sha256()
h.update(r.read(1000000))
answer = input.wait('go')
h.update(r.read())
{'answer': answer, 'sha': h.hexdigest()}`,
      });
      expect(await runtime.wait(task.task_id)).toMatchObject({
        status: 'paused',
        pause_reason: 'awaiting_input',
      });
      expect(hits()).toBe(before + 1);
      await runtime.provideInput(task.task_id, 'go', 'yes');
      const done = await runtime.wait(task.task_id, { until: 'terminal' });
      expect(done).toMatchObject({ status: 'succeeded' });
      expect(output(done)).toEqual({ answer: 'yes', sha });
      expect(hits()).toBe(before + 1);
    });
  },
);
