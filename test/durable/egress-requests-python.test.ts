// `requests` (and plain urllib3) in a Python task, through the host (issue 21, ADR 0048): a real HTTP server on
// loopback (allowed only because the operator's egress says allowPrivate), the python driver (bubblewrap), the
// runtime and a SQLite store. Each request is one journaled egress call; requests follows redirects itself; errors
// are requests' own classes carrying the codecall code; a stored large body streams by ranges; a resumed task sees
// the same bytes without the server being asked again. Skipped (saying why) where python3-requests is missing.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TaskView } from '../../src/api/index.ts';
import { probePython } from '../../src/sandbox/index.ts';
import { usePythonEgress } from './python-egress-fixture.ts';
import { startRecordingServer } from './egress-test-server.ts';
import type { RecordingServer, Seen } from './egress-test-server.ts';

const probe = await probePython();
const skipReason = !probe.ok
  ? probe.reason
  : probe.packages.requests
    ? ''
    : 'python3-requests is not installed here (apt-get install --no-install-recommends python3-requests)';
if (skipReason) console.log(`requests tests skipped: ${skipReason}`);

const SECRET = 's3cret-value';
const SIZE = 3 * 1024 * 1024 + 7;
const large = Buffer.alloc(SIZE);
for (let i = 0, x = 11; i < SIZE; i++) {
  x = (x * 1103515245 + 12345) >>> 0;
  large[i] = x >>> 24;
}
const largeSha = createHash('sha256').update(large).digest('hex');
/** How late /slow answers. */
const SLOW_MS = 2500;

let server: RecordingServer;
let port = 0;
let seen: Seen[] = [];
const late = new Set<NodeJS.Timeout>();
beforeAll(async () => {
  server = await startRecordingServer((req, raw, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path === '/echo') {
      res.writeHead(200, { 'content-type': 'application/json', 'x-echo': 'yes' });
      res.end(
        JSON.stringify({ method: req.method, url: req.url, headers: req.headers, body: raw.toString() }),
      );
    } else if (path === '/login') {
      res.writeHead(302, { location: '/echo?after=login', 'set-cookie': 'sid=abc; Path=/' }).end();
    } else if (path === '/large') {
      res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(large);
    } else if (path === '/slow') {
      const timer = setTimeout(() => {
        late.delete(timer);
        res.writeHead(200, { 'content-type': 'text/plain' }).end('late');
      }, SLOW_MS);
      late.add(timer);
      res.on('close', () => clearTimeout(timer));
    } else return false;
    return true;
  });
  port = server.port;
  seen = server.seen;
});
afterAll(async () => {
  for (const t of late) clearTimeout(t);
  await server.close();
});

describe.skipIf(!!skipReason)(
  `requests in a Python task${skipReason ? ` (skipped: ${skipReason})` : ''}`,
  () => {
    const fx = usePythonEgress({
      probe,
      port: () => port,
      dirPrefix: 'codecall-egress-requests-',
      egress: () => ({ secrets: [{ name: 'TOKEN', value: SECRET, hosts: [`127.0.0.1:${port}`] }] }),
    });
    const { make, access } = fx;
    const base = () => `http://127.0.0.1:${port}`;
    const run = async (code: string, constraints: object = access()) => {
      const runtime = make();
      const task = await runtime.submit({ code, language: 'python', constraints });
      return { runtime, task, done: await runtime.wait(task.task_id, { until: 'terminal' }) };
    };
    const output = (view: TaskView): unknown => (view.result as { output?: unknown } | null)?.output;
    const intents = async (taskId: string) =>
      (await fx.store().readJournal(taskId)).flatMap((e) =>
        e.type === 'tool_intent'
          ? [{ tool: e.data.tool, args: JSON.parse(e.data.args) as Record<string, unknown> }]
          : [],
      );

    it('get with params, headers and a timeout; post json and data; a Session with default headers', async () => {
      const before = seen.length;
      const { task, done } = await run(
        `
import requests
r = requests.get('${base()}/echo', params={'q': 'a b', 'n': 2}, headers={'X-Mine': '1'}, timeout=5)
r.raise_for_status()
got = r.json()
get = [r.status_code, r.ok, r.reason, got['url'], got['headers']['x-mine'], r.headers['X-ECHO'], r.headers.get('content-type'),
       'x-echo' in r.headers, r.url, type(r.content).__name__, r.text == r.content.decode()]
p = requests.post('${base()}/echo', json={'a': [1, 2], 'b': 'é'})
f = requests.post('${base()}/echo', data={'k': 'v w'})
s = requests.Session()
s.headers.update({'X-Session': 'yes', 'Authorization': 'Bearer {{secret:TOKEN}}'})
one = s.get('${base()}/echo').json()
two = s.get('${base()}/echo', headers={'X-Extra': '2'}).json()
{'get': get,
 'post': [p.status_code, p.json()['method'], p.json()['body'], p.json()['headers']['content-type']],
 'data': [f.json()['body'], f.json()['headers']['content-type']],
 'session': [one['headers']['x-session'], two['headers']['x-session'], two['headers']['x-extra']]}`,
        { ...access(), allowedLibraries: ['requests'] },
      );
      expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
      expect(output(done)).toEqual({
        get: [
          200,
          true,
          'OK',
          '/echo?q=a+b&n=2',
          '1',
          'yes',
          'application/json',
          true,
          `${base()}/echo?q=a+b&n=2`,
          'bytes',
          true,
        ],
        post: [200, 'POST', '{"a": [1, 2], "b": "\\u00e9"}', 'application/json'],
        data: ['k=v+w', 'application/x-www-form-urlencoded'],
        session: ['yes', 'yes', '2'],
      });
      // The secret placeholder went through requests unchanged: the host put the value in on the way out...
      const mine = seen.slice(before);
      expect(mine.filter((s) => s.headers.authorization === `Bearer ${SECRET}`)).toHaveLength(2);
      expect(mine[0]?.headers['user-agent']).toMatch(/^python-requests\//);
      // ...and the journal keeps the placeholder. One egress call per request, read or fetch by method.
      const calls = await intents(task.task_id);
      expect(calls.map((c) => c.tool)).toEqual([
        'egress.read',
        'egress.fetch',
        'egress.fetch',
        'egress.read',
        'egress.read',
      ]);
      expect(JSON.stringify(calls[3]?.args)).toContain('Bearer {{secret:TOKEN}}');
      expect(JSON.stringify(calls)).not.toContain(SECRET);
      expect(calls[0]?.args).toMatchObject({ redirect: 'manual', timeoutSeconds: 5 });
    });

    it('raise_for_status raises HTTPError; requests follows redirects (history, cookies); allow_redirects=False', async () => {
      const { task, done } = await run(`
import requests
r = requests.get('${base()}/nothing')
try:
    r.raise_for_status()
    missing = 'no error'
except requests.exceptions.HTTPError as e:
    missing = [type(e).__name__, e.response.status_code, str(e), r.text]
s = requests.Session()
m = s.get('${base()}/login')
moved = [m.status_code, m.url, [h.status_code for h in m.history], m.history[0].headers['location'],
         m.json()['headers'].get('cookie'), s.cookies.get('sid')]
n = requests.get('${base()}/login', allow_redirects=False)
{'missing': missing, 'moved': moved, 'kept': [n.status_code, n.is_redirect, n.headers['Location']]}`);
      expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
      expect(output(done)).toEqual({
        missing: ['HTTPError', 404, `404 Client Error: Not Found for url: ${base()}/nothing`, 'no such page'],
        moved: [200, `${base()}/echo?after=login`, [302], '/echo?after=login', 'sid=abc', 'abc'],
        kept: [302, true, '/echo?after=login'],
      });
      // Each hop is a request of its own, checked by the host.
      expect((await intents(task.task_id)).map((c) => c.args.url)).toEqual([
        `${base()}/nothing`,
        `${base()}/login`,
        `${base()}/echo?after=login`,
        `${base()}/login`,
      ]);
    });

    it('a refused request is a ConnectionError naming EGRESS_REFUSED (and a FetchError); uncaught, the task fails with the code', async () => {
      const { done } = await run(
        `
import requests, codecall
out = []
for url, method in [('https://example.com/', 'GET'), ('${base()}/echo', 'DELETE')]:
    try:
        requests.request(method, url)
        out.append('fetched')
    except requests.exceptions.ConnectionError as e:
        out.append([type(e).__name__, str(e), e.code, e.details['reason'], isinstance(e, codecall.FetchError),
                    isinstance(e, requests.exceptions.RequestException), e.request.url])
out`,
        access({ methods: ['GET'] }),
      );
      expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
      expect(output(done)).toEqual([
        [
          'ConnectionError',
          expect.stringMatching(/^EGRESS_REFUSED: example\.com:443 is not in/) as string,
          'EGRESS_REFUSED',
          'not_allowed',
          true,
          true,
          'https://example.com/',
        ],
        [
          'ConnectionError',
          expect.stringMatching(/^EGRESS_REFUSED: /) as string,
          'EGRESS_REFUSED',
          'method',
          true,
          true,
          `${base()}/echo`,
        ],
      ]);
      const uncaught = await run(`import requests\nrequests.get('https://example.com/')`);
      expect(uncaught.done).toMatchObject({
        status: 'failed',
        error: {
          code: 'EGRESS_REFUSED',
          name: 'ConnectionError',
          message: expect.stringMatching(/^example\.com:443 is not in/) as string,
        },
      });
      // Without network access: the same error, made in the sandbox (no host call).
      const none = await run(
        `
import requests
try:
    requests.get('${base()}/echo')
except requests.ConnectionError as e:
    e.code + ' ' + e.details['reason']`,
        {},
      );
      expect(none.done).toMatchObject({
        status: 'succeeded',
        result: { output: 'EGRESS_REFUSED no_network_access' },
      });
    });

    it('a request past its timeout raises requests.exceptions.Timeout (EGRESS_TIMEOUT)', async () => {
      const started = Date.now();
      const { task, done } = await run(`
import requests, socket
out = []
for timeout in (0.3, (0.1, 0.2)):
    try:
        requests.get('${base()}/slow', timeout=timeout)
        out.append('answered')
    except requests.exceptions.Timeout as e:
        out.append([type(e).__name__, e.code, isinstance(e, requests.exceptions.ConnectionError),
                    isinstance(e, socket.timeout)])
out`);
      expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
      const timedOut = ['ReadTimeout', 'EGRESS_TIMEOUT', false, true];
      expect(output(done)).toEqual([timedOut, timedOut]);
      expect(Date.now() - started).toBeLessThan(SLOW_MS * 2);
      // The timeout (a pair: the sum, the host's one deadline) goes with the request and is journaled.
      const seconds = (await intents(task.task_id)).map((c) => c.args.timeoutSeconds as number);
      expect(seconds[0]).toBe(0.3);
      expect(seconds[1]).toBeCloseTo(0.3);
    });

    it('stream=True and iter_content read a stored 3 MiB body by ranges; its SHA-256 is the server’s', async () => {
      const { done } = await run(`
import hashlib, requests
r = requests.get('${base()}/large', stream=True)
h = hashlib.sha256()
n = 0
for chunk in r.iter_content(chunk_size=65536):
    h.update(chunk)
    n += len(chunk)
whole = requests.get('${base()}/large')
{'sha': h.hexdigest(), 'n': n, 'length': r.headers['content-length'],
 'whole': hashlib.sha256(whole.content).hexdigest()}`);
      expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
      expect(output(done)).toEqual({ sha: largeSha, n: SIZE, length: String(SIZE), whole: largeSha });
    });

    it('plain urllib3 goes through the host too', async () => {
      const { task, done } = await run(`
import urllib3
pm = urllib3.PoolManager()
r = pm.request('GET', '${base()}/echo?via=urllib3', headers={'X-Pool': '1'})
j = __import__('json').loads(r.data)
try:
    urllib3.PoolManager(retries=False).request('GET', 'https://example.com/')
    refused = 'fetched'
except urllib3.exceptions.ProtocolError as e:
    refused = e.args[1].code + ' ' + e.args[1].details['reason'] + ' ' + str(e.args[1].details['port'])
[r.status, j['url'], j['headers']['x-pool'], refused]`);
      expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
      // https stays https (port 443) through urllib3's HTTPSConnection.
      expect(output(done)).toEqual([200, '/echo?via=urllib3', '1', 'EGRESS_REFUSED not_allowed 443']);
      expect((await intents(task.task_id)).map((c) => c.tool)).toEqual(['egress.read', 'egress.read']);
    });

    it('a durable task paused after requests calls is resumed without asking the server again', async () => {
      const runtime = make();
      const task = await runtime.submit({
        code: `
import hashlib, requests
s = requests.Session()
first = s.get('${base()}/count').json()
big = s.get('${base()}/large', stream=True)
h = hashlib.sha256()
h.update(big.raw.read(1000000))
answer = input.wait('go')
for chunk in big.iter_content(100000):
    h.update(chunk)
second = requests.get('${base()}/count').json()
{'first': first, 'answer': answer, 'second': second, 'sha': h.hexdigest()}`,
        language: 'python',
        constraints: access(),
      });
      expect(await runtime.wait(task.task_id)).toMatchObject({
        status: 'paused',
        pause_reason: 'awaiting_input',
      });
      const counted = seen.filter((s) => s.url === '/count').length;
      const bigs = seen.filter((s) => s.url === '/large').length;
      const firstN = server.count;
      await runtime.provideInput(task.task_id, 'go', 'yes');
      const done = await runtime.wait(task.task_id, { until: 'terminal' });
      expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
      expect(output(done)).toEqual({
        first: { n: firstN },
        answer: 'yes',
        second: { n: firstN + 1 },
        sha: largeSha,
      });
      // The replay answered the first two requests from the journal (and the body from the store): one more request.
      expect(seen.filter((s) => s.url === '/count').length).toBe(counted + 1);
      expect(seen.filter((s) => s.url === '/large').length).toBe(bigs);
    });
  },
);
