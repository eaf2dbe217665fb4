// A Python program's requests through the host (issue 21), end to end: a real HTTP server on loopback (allowed
// only because the operator's egress says allowPrivate), the python driver (bubblewrap), the runtime and a SQLite
// store. codecall.fetch, urllib.request and http.client all make the same journaled egress calls: a resumed task
// sees the same bytes without the server being asked again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TaskView } from '../../src/api/index.ts';
import { probePython } from '../../src/sandbox/index.ts';
import { usePythonEgress } from './python-egress-fixture.ts';
import { startRecordingServer } from './egress-test-server.ts';
import type { RecordingServer, Seen } from './egress-test-server.ts';

const probe = await probePython();

let server: RecordingServer;
let port = 0;
let seen: Seen[] = [];

beforeAll(async () => {
  server = await startRecordingServer((req, raw, res) => {
    const body = raw.toString();
    if (req.url === '/echo') {
      res.writeHead(201, 'Made', {
        'content-type': 'text/plain; charset=latin-1',
        'x-seen': req.method ?? '',
        'set-cookie': ['a=1', 'b=2'],
      });
      res.end(Buffer.from(`${req.method} ${body} é`, 'latin1'));
    } else if (req.url === '/bytes') {
      res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(Buffer.from([0, 1, 254, 255]));
    } else if (req.url === '/moved') {
      res.writeHead(302, { location: '/count' }).end();
    } else return false;
    return true;
  });
  port = server.port;
  seen = server.seen;
});
afterAll(() => server.close());

describe.skipIf(!probe.ok)(`fetch from a Python task${probe.ok ? '' : ` (skipped: ${probe.reason})`}`, () => {
  const fx = usePythonEgress({ probe, port: () => port, dirPrefix: 'codecall-egress-python-' });
  const { make, access } = fx;
  const base = () => `http://127.0.0.1:${port}`;
  const run = async (code: string, constraints: object = access()) => {
    const runtime = make();
    const task = await runtime.submit({ code, language: 'python', constraints });
    return { runtime, task, done: await runtime.wait(task.task_id, { until: 'terminal' }) };
  };
  /** A python task's value (its result has the output, the logs and what it used). */
  const output = (view: TaskView): unknown => (view.result as { output?: unknown } | null)?.output;
  const tools = async (taskId: string) =>
    (await fx.store().readJournal(taskId)).flatMap((e) => (e.type === 'tool_intent' ? [e.data.tool] : []));

  it('codecall.fetch gets and posts with headers and a body, reads bytes, text and json', async () => {
    const before = seen.length;
    const { task, done } = await run(
      `
import codecall
from codecall import fetch
a = fetch('${base()}/count')
b = codecall.fetch('${base()}/echo', method='post', body='hello', headers={'X-Mine': '1'})
c = fetch('${base()}/bytes', headers=[('X-Two', 'a'), ('X-Two', 'b')])
d = fetch('${base()}/echo', method='PUT', body=b'\\x00raw')
m = fetch('${base()}/moved')
{'a': [a.status, a.ok, a.json(), a.headers['Content-Type']],
 'b': [b.status, b.reason, b.ok, b.headers.get('x-seen'), b.headers.get_all('set-cookie'), b.text, b.redirected],
 'c': list(c.content), 'url': c.url, 'd': d.content[:5].hex(), 'e': [type(b).__name__, repr(b)],
 'm': [m.status, m.redirected, m.url]}`,
      // codecall is the sandbox's own module: allowed whatever allowed_libraries lists.
      { ...access(), allowedLibraries: ['math'] },
    );
    expect(done).toMatchObject({ status: 'succeeded' });
    expect(output(done)).toEqual({
      a: [200, true, { n: expect.any(Number) as number }, 'application/json'],
      b: [201, 'Made', true, 'POST', ['a=1', 'b=2'], 'POST hello é', false],
      c: [0, 1, 254, 255],
      url: `${base()}/bytes`,
      d: '5055542000',
      e: ['Response', '<Response [201]>'],
      m: [200, true, `${base()}/count`],
    });
    const mine = seen.slice(before);
    expect(mine.find((s) => s.method === 'POST')?.headers['x-mine']).toBe('1');
    expect(mine.find((s) => s.url === '/bytes')?.headers['x-two']).toBe('a, b');
    expect(mine.find((s) => s.method === 'PUT')?.body).toBe('\0raw');
    expect(await tools(task.task_id)).toEqual([
      'egress.read',
      'egress.fetch',
      'egress.read',
      'egress.fetch',
      'egress.read',
    ]);
  });

  it('urllib.request.urlopen: json.load of a response, HTTPError on a 404, a redirect followed by urllib', async () => {
    const { task, done } = await run(`
import json, urllib.request, urllib.error
data = json.load(urllib.request.urlopen('${base()}/count', timeout=5))
try:
    urllib.request.urlopen('${base()}/nothing')
    missing = 'no error'
except urllib.error.HTTPError as e:
    missing = [e.code, e.reason, e.headers['content-type'], e.read().decode()]
req = urllib.request.Request('${base()}/echo', data=b'x=1', headers={'X-Via': 'urllib'})
with urllib.request.urlopen(req) as r:
    posted = [r.status, r.getheader('x-seen'), r.read().decode('latin-1')]
moved = urllib.request.urlopen('${base()}/moved')
{'data': data, 'missing': missing, 'posted': posted, 'moved': [moved.status, moved.geturl(), json.loads(moved.read())]}`);
    expect(done).toMatchObject({ status: 'succeeded' });
    expect(output(done)).toEqual({
      data: { n: expect.any(Number) as number },
      missing: [404, 'Not Found', 'text/plain', 'no such page'],
      posted: [201, 'POST', 'POST x=1 é'],
      moved: [200, `${base()}/count`, { n: expect.any(Number) as number }],
    });
    expect(await tools(task.task_id)).toEqual([
      'egress.read',
      'egress.read',
      'egress.fetch',
      'egress.read',
      'egress.read',
    ]);
  });

  it('http.client: request and getresponse, and the putrequest/send form', async () => {
    const { done } = await run(`
import http.client, json
conn = http.client.HTTPConnection('127.0.0.1', ${port})
conn.request('GET', '/count')
r = conn.getresponse()
got = [r.status, r.reason, r.getheader('Content-Type'), dict(r.getheaders())['content-type'], json.loads(r.read())]
conn.close()
conn = http.client.HTTPConnection('127.0.0.1:${port}')
conn.putrequest('PATCH', '/echo')
conn.putheader('Content-Length', '3')
conn.endheaders()
conn.send(b'abc')
r = conn.getresponse()
sent = [r.status, r.read(5), r.read()]
missing = http.client.HTTPConnection('127.0.0.1', ${port})
missing.request('GET', '/nothing')
{'got': got, 'sent': [sent[0], sent[1].decode(), sent[2].decode('latin-1')], 'missing': missing.getresponse().status}`);
    expect(done).toMatchObject({ status: 'succeeded' });
    expect(output(done)).toEqual({
      got: [200, 'OK', 'application/json', 'application/json', { n: expect.any(Number) as number }],
      sent: [201, 'PATCH', ' abc é'],
      missing: 404,
    });
  });

  it('asyncio.gather of fetch_async makes the requests at once', async () => {
    const before = seen.filter((s) => s.url === '/count').length;
    const { task, done } = await run(`
import asyncio
from codecall import fetch_async
async def main():
    responses = await asyncio.gather(*[fetch_async('${base()}/count') for _ in range(3)])
    return [r.status for r in responses], sorted(r.json()['n'] for r in responses)
statuses, ns = asyncio.run(main())
{'statuses': statuses, 'distinct': len(set(ns))}`);
    expect(done).toMatchObject({
      status: 'succeeded',
      result: { output: { statuses: [200, 200, 200], distinct: 3 } },
    });
    expect(seen.filter((s) => s.url === '/count').length).toBe(before + 3);
    expect(await tools(task.task_id)).toEqual(['egress.read', 'egress.read', 'egress.read']);
  });

  it('refusals are FetchErrors with stable codes (a URLError around one from urllib); uncaught, it fails the task', async () => {
    const { done } = await run(
      `
import codecall, urllib.request, urllib.error
codes = []
for url, method in [('https://example.com/', 'GET'), ('${base()}/count', 'DELETE')]:
    try:
        codecall.fetch(url, method=method)
        codes.append('fetched')
    except codecall.FetchError as e:
        codes.append(e.code + ':' + e.details['reason'] + ':' + str(isinstance(e, ToolError) and isinstance(e, OSError)))
try:
    urllib.request.urlopen('https://example.com/')
except urllib.error.URLError as e:
    codes.append(type(e).__name__ + ':' + e.reason.code + ':' + e.reason.details['reason'])
codes`,
      access({ methods: ['GET'] }),
    );
    expect(done).toMatchObject({
      status: 'succeeded',
      result: {
        output: [
          'EGRESS_REFUSED:not_allowed:True',
          'EGRESS_REFUSED:method:True',
          'URLError:EGRESS_REFUSED:not_allowed',
        ],
      },
    });
    const uncaught = await run(`import codecall\ncodecall.fetch('https://example.com/')`);
    expect(uncaught.done).toMatchObject({
      status: 'failed',
      // As for JavaScript and any tool error: uncaught, the task fails with the refusal's own code.
      error: {
        code: 'EGRESS_REFUSED',
        name: 'FetchError',
        message: expect.stringContaining('example.com') as string,
      },
    });
  });

  it('without network access fetch, urllib and http.client fail clearly, and egress is no namespace', async () => {
    const { task, done } = await run(
      `
import codecall, urllib.request, urllib.error, http.client
out = []
try:
    codecall.fetch('${base()}/count')
except codecall.FetchError as e:
    out.append([e.code, e.details, str(e)])
try:
    urllib.request.urlopen('${base()}/count')
except urllib.error.URLError as e:
    out.append(e.reason.code)
try:
    http.client.HTTPSConnection('example.com').request('GET', '/')
except OSError as e:
    out.append(e.code)
try:
    egress.read(url='${base()}/count')
except NameError as e:
    out.append('NameError')
out`,
      {},
    );
    expect(done).toMatchObject({ status: 'succeeded' });
    const [first, ...rest] = output(done) as [[string, unknown, string], ...string[]];
    expect(first[0]).toBe('EGRESS_REFUSED');
    expect(first[1]).toEqual({ reason: 'no_network_access' });
    expect(first[2]).toMatch(/no network access.*tool_constraints\.network_access/);
    expect(rest).toEqual(['EGRESS_REFUSED', 'EGRESS_REFUSED', 'NameError']);
    expect(await tools(task.task_id)).toEqual([]);
  });

  it('a resumed task sees the same bytes and the server is not asked again', async () => {
    const runtime = make();
    const task = await runtime.submit({
      code: `
import codecall, urllib.request, json
first = codecall.fetch('${base()}/count').json()
via = json.load(urllib.request.urlopen('${base()}/count'))
answer = input.wait('go')
second = codecall.fetch('${base()}/count').json()
{'first': first, 'via': via, 'answer': answer, 'second': second}`,
      language: 'python',
      constraints: access(),
    });
    expect(await runtime.wait(task.task_id)).toMatchObject({
      status: 'paused',
      pause_reason: 'awaiting_input',
    });
    const counted = seen.filter((s) => s.url === '/count').length;
    const firstN = server.count;
    await runtime.provideInput(task.task_id, 'go', 'yes');
    const done = await runtime.wait(task.task_id, { until: 'terminal' });
    expect(done).toMatchObject({
      status: 'succeeded',
      result: {
        output: { first: { n: firstN - 1 }, via: { n: firstN }, answer: 'yes', second: { n: firstN + 1 } },
      },
    });
    // The replay answered the first two requests from the journal: one more request, the last one.
    expect(seen.filter((s) => s.url === '/count').length).toBe(counted + 1);
  });

  it('max_requests holds over a pause: the journal counts what was made', async () => {
    const runtime = make();
    const task = await runtime.submit({
      code: `
import codecall
def get():
    try:
        return codecall.fetch('${base()}/count').status
    except codecall.FetchError as e:
        return e.code
a = get()
input.wait('go')
[a, get(), get()]`,
      language: 'python',
      constraints: access({ maxRequests: 2 }),
    });
    expect(await runtime.wait(task.task_id)).toMatchObject({ status: 'paused' });
    await runtime.provideInput(task.task_id, 'go', 1);
    expect(await runtime.wait(task.task_id, { until: 'terminal' })).toMatchObject({
      status: 'succeeded',
      result: { output: [200, 200, 'EGRESS_LIMIT'] },
    });
  });
});
