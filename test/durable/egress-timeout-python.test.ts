// A Python program's own request timeouts (issue 21): urlopen(url, timeout=...), http.client's timeout=,
// socket.setdefaulttimeout and codecall.fetch(timeout=) go with the request to the host, which holds the request to
// the shortest of them and the task's network_access.timeout_seconds. Past it the program gets what CPython raises
// for a server that accepts and does not answer in time: a TimeoutError (socket.timeout), unwrapped by urlopen.
// A real loopback server that answers /slow late; the python driver (bubblewrap), the runtime and a SQLite store.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/durable/index.ts';
import { createEgress } from '../../src/egress/index.ts';
import { ToolRegistry } from '../../src/index.ts';
import type { Runtime } from '../../src/api/index.ts';
import type { TaskStore } from '../../src/internal.ts';
import { createPythonDriver, probePython } from '../../src/sandbox/index.ts';
import type { PythonDriver } from '../../src/sandbox/index.ts';
import { createSqliteTaskStore } from '../../src/store/index.ts';
import { startRecordingServer } from './egress-test-server.ts';
import type { RecordingServer } from './egress-test-server.ts';

const probe = await probePython();
/** How late /slow answers. */
const SLOW_MS = 2500;

let server: RecordingServer;
const late = new Set<NodeJS.Timeout>();
beforeAll(async () => {
  server = await startRecordingServer((req, _raw, res) => {
    if (req.url !== '/slow') return false;
    const timer = setTimeout(() => {
      late.delete(timer);
      res.writeHead(200, { 'content-type': 'text/plain' }).end('late');
    }, SLOW_MS);
    late.add(timer);
    res.on('close', () => clearTimeout(timer));
    return true;
  });
});
afterAll(async () => {
  for (const t of late) clearTimeout(t);
  await server.close();
});

describe.skipIf(!probe.ok)(
  `request timeouts of a Python task${probe.ok ? '' : ` (skipped: ${probe.reason})`}`,
  () => {
    let driver: PythonDriver;
    let store: TaskStore;
    let dir: string;
    let runtime: Runtime;
    beforeAll(async () => {
      driver = createPythonDriver({ warm: 1, ...(probe.ok ? { probe } : {}) });
      dir = await mkdtemp(join(tmpdir(), 'codecall-egress-timeout-'));
      store = await createSqliteTaskStore({ path: join(dir, 'tasks.db') });
      runtime = createRuntime({
        store,
        drivers: [driver],
        tools: new ToolRegistry([]),
        pollMs: 20,
        egress: createEgress({ allowPrivate: true }),
      });
      runtime.start();
    });
    afterAll(async () => {
      await runtime.close();
      await store.close();
      await driver.close();
      await rm(dir, { recursive: true, force: true });
    });

    it('raises TimeoutError past the timeout the program gives, capped by the task timeout_seconds', async () => {
      const url = `http://127.0.0.1:${server.port}`;
      const started = Date.now();
      const task = await runtime.submit({
        language: 'python',
        constraints: {
          networkAccess: { allow: [`127.0.0.1:${server.port}`], allowHttp: true, timeoutSeconds: 1 },
        },
        code: `
import socket, urllib.request, urllib.error, http.client, codecall
def caught(make):
    try:
        make()
        return 'answered'
    except Exception as e:
        return [type(e).__name__, isinstance(e, socket.timeout), isinstance(e, urllib.error.URLError),
                getattr(e, 'code', None), (getattr(e, 'details', None) or {}).get('timeout_seconds')]
def conn():
    c = http.client.HTTPConnection('127.0.0.1', ${server.port}, timeout=0.3)
    c.request('GET', '/slow')
    return c.getresponse()
def default():
    socket.setdefaulttimeout(0.2)
    try:
        return urllib.request.urlopen('${url}/slow')
    finally:
        socket.setdefaulttimeout(None)
out = {
    'urlopen': caught(lambda: urllib.request.urlopen('${url}/slow', timeout=0.3)),
    'http.client': caught(conn),
    'default': caught(default),
    'fetch': caught(lambda: codecall.fetch('${url}/slow', timeout=0.25)),
    # Longer than the task's 1 s: the task's holds.
    'capped': caught(lambda: urllib.request.urlopen('${url}/slow', timeout=30)),
    'fast': urllib.request.urlopen('${url}/count', timeout=0.9).status,
}
try:
    codecall.fetch('${url}/count', timeout=-1)
except ValueError as e:
    out['bad'] = str(e)
out`,
      });
      const done = await runtime.wait(task.task_id, { until: 'terminal' });
      expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
      const timedOut = (seconds: number) => ['FetchTimeoutError', true, false, 'EGRESS_TIMEOUT', seconds];
      expect((done.result as { output: unknown }).output).toEqual({
        urlopen: timedOut(0.3),
        'http.client': timedOut(0.3),
        default: timedOut(0.2),
        fetch: timedOut(0.25),
        capped: timedOut(1),
        fast: 200,
        bad: 'fetch: timeout must be a number of seconds above 0',
      });
      // None waited for the server's late answer (5 of them would take 12.5 s).
      expect(Date.now() - started).toBeLessThan(SLOW_MS * 2);
      // The timeout is part of the journaled request; a replay answers from the journal.
      const intents = (await store.readJournal(task.task_id)).flatMap((e) =>
        e.type === 'tool_intent' ? [JSON.parse(e.data.args) as { timeoutSeconds?: number }] : [],
      );
      expect(intents.map((a) => a.timeoutSeconds)).toEqual([0.3, 0.3, 0.2, 0.25, 30, 0.9]);
    });
  },
);
