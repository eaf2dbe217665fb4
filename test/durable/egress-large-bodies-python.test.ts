// Large fetch responses out of line (ADR 0046) from a Python task: codecall.fetch's read(n) and urllib's
// response.read(n) stream a body the host stored, by ranges; a resumed task reads the same bytes from the store and
// the server is not asked again. The python driver (bubblewrap), the runtime and a SQLite store.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TaskView } from '../../src/api/index.ts';
import { probePython } from '../../src/sandbox/index.ts';
import { usePythonEgress } from './python-egress-fixture.ts';
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
    const fx = usePythonEgress({ probe, port: () => port, dirPrefix: 'codecall-bodies-python-' });
    const { make, access } = fx;
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
