// `requests` with an HTTPAdapter mounted with max_retries (a urllib3 Retry), through the host (issue 21): each
// attempt is an egress call of its own, journaled; statuses in status_forcelist are retried (Retry-After honoured),
// a connection refused is retried as a connect error, spent retries raise requests' own errors; refusals are never
// retried. A real HTTP server on loopback and a closed port, the python driver, the runtime, a SQLite store.
// Skipped (saying why) where python3-requests is missing.
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TaskView } from '../../src/api/index.ts';
import { probePython } from '../../src/sandbox/index.ts';
import { usePythonEgress } from './python-egress-fixture.ts';
import { startRecordingServer } from './egress-test-server.ts';
import type { RecordingServer } from './egress-test-server.ts';

const probe = await probePython();
const skipReason = !probe.ok
  ? probe.reason
  : probe.packages.requests
    ? ''
    : 'python3-requests is not installed here (apt-get install --no-install-recommends python3-requests)';
if (skipReason) console.log(`requests retry tests skipped: ${skipReason}`);

let server: RecordingServer;
let port = 0;
/** A port nothing listens on (bound, then closed): a connection to it is refused. */
let closedPort = 0;
const flaky = new Map<string, number>();
beforeAll(async () => {
  server = await startRecordingServer((req, _raw, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/flaky') {
      // 503 (with Retry-After: 0) until the n-th time this key is asked.
      const key = url.searchParams.get('k') ?? '';
      const n = (flaky.get(key) ?? 0) + 1;
      flaky.set(key, n);
      if (n <= Number(url.searchParams.get('fail') ?? 2))
        res.writeHead(503, { 'retry-after': '0', 'content-type': 'text/plain' }).end('busy');
      else res.writeHead(200, { 'content-type': 'text/plain' }).end(`ok after ${n}`);
      return true;
    }
    return false;
  });
  port = server.port;
  const probeServer = createServer();
  await new Promise<void>((resolve) => probeServer.listen(0, '127.0.0.1', resolve));
  closedPort = (probeServer.address() as AddressInfo).port;
  await new Promise<void>((resolve) => probeServer.close(() => resolve()));
});
afterAll(async () => {
  await server.close();
});

describe.skipIf(!!skipReason)(
  `requests with HTTPAdapter(max_retries) in a Python task${skipReason ? ` (skipped: ${skipReason})` : ''}`,
  () => {
    const fx = usePythonEgress({ probe, port: () => port, dirPrefix: 'codecall-egress-retries-' });
    const base = () => `http://127.0.0.1:${port}`;
    const output = (view: TaskView): unknown => (view.result as { output?: unknown } | null)?.output;

    it('retries statuses and refused connections by the Retry; each attempt journaled; spent: the library’s errors', async () => {
      const runtime = fx.make();
      const task = await runtime.submit({
        code: `
import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry
s = requests.Session()
s.mount('http://', HTTPAdapter(max_retries=Retry(total=3, backoff_factor=0, status_forcelist=[503])))
ok = s.get('${base()}/flaky?k=a&fail=2')
out = {'ok': [ok.status_code, ok.text]}
try:
    s.get('http://127.0.0.1:${closedPort}/x')
    out['refused'] = 'fetched'
except requests.exceptions.ConnectionError as e:
    out['refused'] = [type(e).__name__, e.code, e.details['cause']]
try:
    s.get('${base()}/flaky?k=b&fail=9')
    out['spent'] = 'fetched'
except requests.exceptions.RetryError as e:
    out['spent'] = type(e).__name__
# POST is not in Retry's allowed_methods: its 503 comes back as it is.
out['post'] = s.post('${base()}/flaky?k=c&fail=1', data='x').status_code
try:
    s.get('https://example.com/')
except requests.exceptions.ConnectionError as e:
    out['not_allowed'] = e.code
out`,
        language: 'python',
        constraints: {
          networkAccess: {
            allow: [`127.0.0.1:${port}`, `127.0.0.1:${closedPort}`],
            allowHttp: true,
          },
          allowedLibraries: ['requests.*', 'urllib3.*'],
        },
      });
      const done = await runtime.wait(task.task_id, { until: 'terminal' });
      expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
      expect(output(done)).toEqual({
        ok: [200, 'ok after 3'],
        refused: ['ConnectionError', 'EGRESS_FAILED', 'connection_refused'],
        spent: 'RetryError',
        post: 503,
        not_allowed: 'EGRESS_REFUSED',
      });
      expect([flaky.get('a'), flaky.get('b'), flaky.get('c')]).toEqual([3, 4, 1]);
      // One journaled egress call per attempt: 3 + 4 (refused, total=3) + 4 + 1 + 1 (refused, not retried).
      const journal = await fx.store().readJournal(task.task_id);
      const calls = journal.filter(
        (e) => e.type === 'tool_intent' && String(e.data.tool).startsWith('egress.'),
      );
      expect(calls).toHaveLength(13);
      const outcomes = journal.filter((e) => e.type === 'tool_outcome');
      expect(outcomes.length).toBeGreaterThanOrEqual(13);
    });
  },
);
