import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/errors/index.ts';
import { countTasks, useApiFixture } from './api-fixture.ts';
import type { ApiKey, ErrorBody } from './api-fixture.ts';

// Arbitrary requests against every route of the API, over the real runtime (SQLite file, quickjs driver): random
// JSON, known bodies with one field of the wrong type, bodies past the limit, deeply nested JSON, bytes that are
// not JSON or not UTF-8, other content types, odd ids, query strings and cursors, missing or bad keys.
//
// Properties: never a 5xx; every 4xx is the envelope { error: { code, message, details } } with a code of
// ERROR_CODES and the status that table gives it; a 4xx stores no task, and a 2xx stores only what it says.
//
// FUZZ_SEED repeats a failure (fast-check prints the seed; FUZZ_RANDOM=1 picks a new one); FUZZ_RUNS sets the
// number of runs; FUZZ_VERBOSE=1 prints how often each route answered each code. E.g. FUZZ_RANDOM=1 FUZZ_RUNS=3000 npx vitest run test/http/api-fuzz.test.ts.

const NUM_RUNS = Number(process.env.FUZZ_RUNS ?? 300);
const SEED =
  process.env.FUZZ_SEED !== undefined
    ? Number(process.env.FUZZ_SEED)
    : process.env.FUZZ_RANDOM === '1'
      ? undefined
      : 20261201;
const VERBOSE = process.env.FUZZ_VERBOSE === '1';
const BODY_LIMIT = 64 * 1024;

interface Req {
  method: 'GET' | 'POST';
  url: string;
  headers: Record<string, string>;
  payload?: string | Buffer;
}

describe('HTTP API under arbitrary requests (property)', () => {
  const fx = useApiFixture('http-fuzz', { bodyLimit: BODY_LIMIT });
  let key: ApiKey;
  /** Paused for input `who`: a task the POST routes can really act on (never streamed: it does not end). */
  let waiting: string;
  /** Ended (streams end at once) and another tenant's (404). */
  let done: string;
  let foreign: string;
  let batch: string;

  beforeAll(async () => {
    key = await fx.key('fuzz');
    const other = await fx.key('other');
    const submit = async (k: ApiKey, code: string) =>
      (
        await fx.app.inject({ method: 'POST', url: '/api/v1/tasks', headers: k.headers, payload: { code } })
      ).json<{ task_id: string }>().task_id;
    waiting = await submit(key, "await input.wait('who'); return 1;");
    done = await submit(key, 'return 1');
    foreign = await submit(other, 'return 2');
    batch = (
      await fx.app.inject({
        method: 'POST',
        url: '/api/v1/tasks/batch',
        headers: key.headers,
        payload: { tasks: [{ code: 'return 3' }] },
      })
    ).json<{ batch_id: string }>().batch_id;
    for (const [id, status] of [
      [waiting, 'paused'],
      [done, 'succeeded'],
      [foreign, 'succeeded'],
    ] as const) {
      await fx.runtime.wait(id, { until: status === 'paused' ? 'settled' : 'terminal' });
      expect((await fx.runtime.get(id))?.status).toBe(status);
    }
  });

  const seen = new Map<string, number>();
  function tally(req: Req, res: { statusCode: number; body: string }): void {
    const route = req.url
      .replace(/\?.*/, '')
      .replace(/^\/api\/v1\/(tasks|batches)\/(?!batch$)[^/]+/, '/api/v1/$1/:id');
    const code = res.statusCode >= 400 ? (JSON.parse(res.body) as ErrorBody).error.code : 'ok';
    const k = `${req.method} ${route.length > 60 ? 'long' : route} ${res.statusCode} ${code}`;
    seen.set(k, (seen.get(k) ?? 0) + 1);
  }
  afterAll(() => {
    if (VERBOSE)
      console.log(
        [...seen]
          .sort()
          .map(([k, n]) => `${String(n).padStart(5)} ${k}`)
          .join('\n'),
      );
  });

  /** Sends one request and checks the properties; returns the response for more checks. */
  async function check(req: Req) {
    const before = await countTasks(fx.store);
    const res = await fx.app.inject(req);
    const after = await countTasks(fx.store);
    if (VERBOSE) tally(req, res);
    const what = `${req.method} ${req.url.slice(0, 200)} -> ${res.statusCode} ${res.body.slice(0, 300)}`;
    expect(res.statusCode, what).toBeLessThan(500);
    if (res.statusCode >= 400) {
      const body = res.json<ErrorBody>();
      expect(Object.keys(body), what).toEqual(['error']);
      expect(Object.keys(body.error).sort(), what).toEqual(['code', 'details', 'message']);
      expect(typeof body.error.message, what).toBe('string');
      expect(body.error.details !== null && typeof body.error.details === 'object', what).toBe(true);
      expect(Object.hasOwn(ERROR_CODES, body.error.code), what).toBe(true);
      expect(res.statusCode, what).toBe(ERROR_CODES[body.error.code as keyof typeof ERROR_CODES].status);
      expect(after, `a ${res.statusCode} stored a task: ${what}`).toBe(before);
    } else if (req.method === 'POST' && req.url.startsWith('/api/v1/tasks/batch')) {
      expect(after - before, what).toBe(res.json<{ task_ids: string[] }>().task_ids.length);
    } else if (req.method === 'POST' && /^\/api\/v1\/tasks\/?(\?|$)/.test(req.url)) {
      // One task, or none when an Idempotency-Key repeats; either way it reads back, events and all.
      expect([0, 1], what).toContain(after - before);
      const taskId = res.json<{ task_id: string }>().task_id;
      const headers = { authorization: req.headers.authorization ?? '' };
      expect((await fx.app.inject({ url: `/api/v1/tasks/${taskId}`, headers })).statusCode, what).toBe(200);
      expect((await fx.app.inject({ url: `/api/v1/tasks/${taskId}/events`, headers })).statusCode, what).toBe(
        200,
      );
    } else {
      expect(after, what).toBe(before);
    }
    return res;
  }

  // ---- arbitraries ----

  const urlText = fc.oneof(
    fc.string(),
    fc.string({ unit: 'grapheme' }),
    fc.constantFrom('', ' ', '../', '..\\..', '\u0000', 'null', '__proto__', 'constructor', '𝌆'.repeat(50)),
  );
  // Lone surrogates too: valid JSON (`"\ud800"`), though not in a URL.
  const text = fc.oneof(urlText, fc.string({ unit: 'binary' }));
  const deep = (depth: number, open = '[', close = ']') => open.repeat(depth) + close.repeat(depth);
  // Deep values are spliced into the JSON text: JSON.stringify itself would overflow the stack on them.
  const DEEP = '\u0001deep:';
  const nested = fc.integer({ min: 90, max: 30_000 }).map((n) => `${DEEP}${n}`);
  const toJson = (value: unknown): string =>
    JSON.stringify(value).replace(/"\\u0001deep:([0-9]+)"/g, (_, n: string) => deep(Number(n)));
  const anyJson = fc.jsonValue({ stringUnit: 'binary', maxDepth: 4 });
  const wrong = fc.oneof(
    anyJson,
    text,
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.constantFrom(null, true, false, 0, -0, -1, 1e308, 2 ** 53 + 2, 2 ** 31, [], {}, [[]], { a: {} }),
    nested,
  );

  const id = fc.oneof(
    fc.constant('waiting'),
    fc.constant('done'),
    fc.constant('foreign'),
    fc.constant('batch'),
    urlText.map(encodeURIComponent),
    fc.integer({ min: 100, max: 5000 }).map((n) => 'x'.repeat(n)),
    fc.constantFrom(
      '',
      '..',
      '..%2F..%2Fetc',
      '%2E%2E',
      '%E0%A4%A',
      '%ZZ',
      '%00',
      '%F0%9F%98',
      'a%2Fb',
      'task_x',
    ),
  );
  const real = (s: string): string =>
    s === 'waiting' ? waiting : s === 'done' ? done : s === 'foreign' ? foreign : s === 'batch' ? batch : s;

  const query = fc
    .array(
      fc.tuple(
        fc.oneof(fc.constantFrom('status', 'session_id', 'tenant', 'limit', 'cursor', 'after'), urlText),
        fc.oneof(
          urlText,
          fc.constantFrom(
            'paused',
            'succeeded',
            'fuzz',
            'other',
            '0',
            '1',
            '1000',
            '1001',
            '-1',
            '1e3',
            '0-0',
          ),
          fc.base64String(),
          fc.integer().map(String),
        ),
      ),
      { maxLength: 4 },
    )
    .map((pairs) =>
      pairs.length === 0
        ? ''
        : `?${pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&')}`,
    );
  const rawQuery = fc.constantFrom(
    '?',
    '?&&',
    '?limit',
    '?limit=%ZZ',
    '?cursor=%',
    '?a[b]=1',
    '?limit=1&limit=2',
  );

  const getReq = fc
    .tuple(fc.constantFrom('list', 'task', 'events', 'stream', 'batch'), id, fc.oneof(query, rawQuery))
    // Only a task that has ended (or none) is streamed: a live stream does not end within inject.
    .map(([route, i, q]) => {
      const t = real(route === 'stream' && i === 'waiting' ? 'done' : i);
      const path = {
        list: '/api/v1/tasks',
        task: `/api/v1/tasks/${t}`,
        events: `/api/v1/tasks/${t}/events`,
        stream: `/api/v1/tasks/${t}/stream`,
        batch: `/api/v1/batches/${t}`,
      }[route];
      return { method: 'GET' as const, url: path + q };
    });

  const taskBody = { code: 'return 1' };
  const fields: Record<string, { base: Record<string, unknown>; fields: string[] }> = {
    tasks: {
      base: taskBody,
      fields: [
        'code',
        'instruction',
        'language',
        'seed',
        'session_id',
        'tools',
        'metadata',
        'priority',
        'max_retries',
        'deadline_seconds',
        'callback_url',
        'tool_constraints',
        'unknown_field',
      ],
    },
    batch: { base: { tasks: [taskBody, taskBody] }, fields: ['tasks', 'callback_url', 'unknown_field'] },
    control: { base: { action: 'pause' }, fields: ['action', 'reason', 'unknown_field'] },
    approvals: { base: { decision: 'reject' }, fields: ['decision', 'reason', 'unknown_field'] },
    input: { base: { name: 'who', value: 1 }, fields: ['name', 'value', 'unknown_field'] },
  };
  const constraintFields = [
    'timeout_seconds',
    'cpu_seconds',
    'max_memory_mb',
    'allowed_libraries',
    'blocked_commands',
    'network_access',
  ];

  /** A known body with one field (or one field of one batch task, or of tool_constraints) wrong or missing. */
  const mutated = (route: string) => {
    const spec = fields[route]!;
    return fc
      .tuple(
        fc.constantFrom(...spec.fields),
        wrong,
        fc.boolean(),
        fc.constantFrom(...constraintFields),
        fc.nat(2),
      )
      .map(([field, value, drop, constraint, where]) => {
        const body: Record<string, unknown> = structuredClone(spec.base);
        if (route === 'batch' && where === 1) {
          const task: Record<string, unknown> = { ...taskBody, [fields.tasks!.fields[Number(drop)]!]: value };
          return { tasks: [taskBody, task] };
        }
        if (route === 'tasks' && where === 1)
          return { ...taskBody, tool_constraints: { [constraint]: value } };
        if (drop) delete body[field];
        else body[field] = value;
        return body;
      });
  };

  const contentType = fc.constantFrom(
    'application/json',
    'application/json; charset=utf-8',
    'application/json; charset=latin1',
    'APPLICATION/JSON',
    'text/plain',
    'application/octet-stream',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/jsonx',
    ';;',
  );

  /** Task bodies that should be accepted: the 2xx paths must hold the properties too. */
  const validTask = fc.record(
    {
      code: fc.constantFrom('return 1', 'return [1, "two", null]', "throw new Error('x')", 'return {'),
      language: fc.constantFrom('javascript', 'typescript'),
      seed: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
      session_id: fc.stringMatching(/^[A-Za-z0-9_.:-]{1,20}$/),
      tools: fc.array(fc.string({ minLength: 1, maxLength: 10 }), { maxLength: 3 }),
      metadata: fc.dictionary(text, anyJson, { maxKeys: 4 }),
      priority: fc.integer({ min: -100, max: 100 }),
      max_retries: fc.integer({ min: 0, max: 10 }),
      deadline_seconds: fc.double({ min: 0.001, max: 31_536_000, noNaN: true }),
      tool_constraints: fc.record(
        {
          timeout_seconds: fc.double({ min: 0.5, max: 60, noNaN: true }),
          max_memory_mb: fc.double({ min: 2, max: 256, noNaN: true }),
          allowed_libraries: fc.array(
            fc.stringMatching(/^[a-z_][a-z0-9_]{0,6}(\.[a-z_][a-z0-9_]{0,6}){0,2}(\.\*)?$/),
            { maxLength: 3 },
          ),
          network_access: fc.constant(false),
        },
        { requiredKeys: [] },
      ),
    },
    { requiredKeys: ['code'] },
  );
  const valid = (route: string) =>
    route === 'tasks'
      ? validTask
      : route === 'batch'
        ? fc.record({ tasks: fc.array(validTask, { minLength: 1, maxLength: 5 }) })
        : fc.constant(fields[route]!.base);

  const payload = (route: string) =>
    fc.oneof(
      { weight: 4, arbitrary: mutated(route).map((b) => ({ type: 'application/json', body: toJson(b) })) },
      {
        weight: 3,
        arbitrary: valid(route).map((b) => ({ type: 'application/json', body: JSON.stringify(b) })),
      },
      { weight: 2, arbitrary: anyJson.map((b) => ({ type: 'application/json', body: JSON.stringify(b) })) },
      {
        weight: 1,
        arbitrary: fc
          .integer({ min: BODY_LIMIT + 1, max: BODY_LIMIT * 3 })
          .map((n) => ({ type: 'application/json', body: `{"code":"${'x'.repeat(n)}"}` })),
      },
      {
        weight: 1,
        arbitrary: fc.tuple(fc.integer({ min: 1000, max: 30_000 }), fc.boolean()).map(([n, inField]) => ({
          type: 'application/json',
          body: inField
            ? `{"code":"return 1","metadata":{"a":${deep(n)}}}`
            : deep(n, '{"a":', '}').replace(/}$/, '1}'),
        })),
      },
      {
        weight: 1,
        arbitrary: fc
          .uint8Array({ maxLength: 200 })
          .map((bytes) => ({ type: 'application/json', body: Buffer.from(bytes) })),
      },
      {
        weight: 1,
        arbitrary: fc
          .constantFrom(
            Buffer.from([0x7b, 0x22, 0x63, 0x6f, 0x64, 0x65, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0x22, 0x7d]),
            Buffer.from('\ufeff{"code":"return 1"}'),
            '',
            'null',
            '{"code":"return 1"}{"code":"return 2"}',
            '{"__proto__":{"x":1},"code":"return 1"}',
            '{"code":"return 1","metadata":{"constructor":{"prototype":{"x":1}}}}',
            '[{"code":"return 1"}]',
          )
          .map((body) => ({ type: 'application/json', body })),
      },
      {
        weight: 2,
        arbitrary: fc.tuple(contentType, mutated(route).map(toJson)).map(([type, body]) => ({ type, body })),
      },
    );

  const postReq = fc
    .constantFrom('tasks', 'batch', 'control', 'approvals', 'input')
    .chain((route) =>
      fc.tuple(fc.constant(route), id, id, payload(route), fc.option(fc.string(), { nil: undefined })),
    )
    .map(([route, i, aid, p, idem]) => {
      const t = real(i);
      const url = {
        tasks: '/api/v1/tasks',
        batch: '/api/v1/tasks/batch',
        control: `/api/v1/tasks/${t}/control`,
        approvals: `/api/v1/tasks/${t}/approvals/${real(aid)}`,
        input: `/api/v1/tasks/${t}/input`,
      }[route];
      const headers: Record<string, string> = { 'content-type': p.type };
      // Header values must be visible ASCII (the HTTP layer refuses others before us).
      if (idem !== undefined && /^[\x21-\x7e]*$/.test(idem)) headers['idempotency-key'] = idem;
      return { method: 'POST' as const, url, headers, payload: p.body };
    });

  const auth = fc.oneof(
    { weight: 8, arbitrary: fc.constant('key') },
    { weight: 1, arbitrary: fc.constantFrom('', 'Bearer', 'Bearer cc_nope', 'Basic eA==', 'Bearer  \t') },
  );

  it('answers every request below 500, with the error envelope, and stores nothing on a 4xx', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(getReq, postReq), auth, async (req, a) => {
        const authorization = a === 'key' ? key.headers.authorization : a;
        await check({ ...req, headers: { ...('headers' in req ? req.headers : {}), authorization } });
      }),
      { numRuns: NUM_RUNS, ...(SEED === undefined ? {} : { seed: SEED }) },
    );
  }, 120_000);

  it('explicit cases: nesting, non-JSON bytes, the body limit, odd ids and cursors', async () => {
    const post = (url: string, body: string | Buffer, type = 'application/json') =>
      check({ method: 'POST', url, headers: { ...key.headers, 'content-type': type }, payload: body });
    const get = (url: string) => check({ method: 'GET', url, headers: key.headers });
    const codeOf = (res: { json: () => unknown }) => (res.json() as ErrorBody).error.code;
    // Its own task waiting for input: the property may have steered the shared one.
    const created = await post(
      '/api/v1/tasks',
      JSON.stringify({ code: "return (await input.wait('who')).n;" }),
    );
    const asking = created.json<{ task_id: string }>().task_id;
    expect((await fx.runtime.wait(asking)).status).toBe('paused');

    // 10,000 (and 30,000) levels of arrays: refused before they are parsed (JSON_TOO_DEEP), the process lives on.
    for (const n of [10_000, 30_000]) {
      expect(codeOf(await post('/api/v1/tasks', deep(n)))).toBe('JSON_TOO_DEEP');
      expect(codeOf(await post('/api/v1/tasks/batch', `{"tasks":${deep(n)}}`))).toBe('JSON_TOO_DEEP');
      const meta = await post('/api/v1/tasks', `{"code":"return 1","metadata":{"a":${deep(n)}}}`);
      expect(meta.json<ErrorBody>().error).toMatchObject({ code: 'JSON_TOO_DEEP' });
      // With an Idempotency-Key the body is hashed too: still a 400, not a stack overflow.
      const idem = await check({
        method: 'POST',
        url: '/api/v1/tasks',
        headers: { ...key.headers, 'content-type': 'application/json', 'idempotency-key': `deep-${n}` },
        payload: `{"code":"return 1","metadata":{"a":${deep(n)}}}`,
      });
      expect(idem.statusCode).toBe(400);
      const input = await post(`/api/v1/tasks/${asking}/input`, `{"name":"who","value":${deep(n)}}`);
      expect(input.json<ErrorBody>().error).toMatchObject({ code: 'JSON_TOO_DEEP' });
      expect((await fx.runtime.get(asking))?.status).toBe('paused');
    }
    expect((await get('/healthz')).json()).toEqual({ status: 'ok' });
    // The task still takes a plain value.
    expect((await post(`/api/v1/tasks/${asking}/input`, '{"name":"who","value":{"n":5}}')).statusCode).toBe(
      200,
    );
    expect((await fx.runtime.wait(asking)).result?.output).toBe(5);

    // A malformed allowed_libraries entry has its own code (ADR 0041).
    const pattern = await post(
      '/api/v1/tasks',
      '{"code":"1","language":"python","tool_constraints":{"allowed_libraries":["json","numpy*"]}}',
    );
    expect(pattern.statusCode).toBe(400);
    expect(pattern.json<ErrorBody>().error).toMatchObject({
      code: 'INVALID_LIBRARY_PATTERN',
      details: { field: 'tool_constraints.allowed_libraries', entry: 'numpy*' },
    });

    // Not JSON, not UTF-8, other types.
    expect(codeOf(await post('/api/v1/tasks', Buffer.from([0xff, 0xfe, 0x00, 0x7b])))).toBe('BAD_REQUEST');
    expect(codeOf(await post('/api/v1/tasks', '{"code": '))).toBe('BAD_REQUEST');
    expect(codeOf(await post('/api/v1/tasks', ''))).toBe('BAD_REQUEST');
    expect(codeOf(await post('/api/v1/tasks', '{"code":"return 1"}', 'application/xml'))).toBe(
      'UNSUPPORTED_MEDIA_TYPE',
    );
    expect(codeOf(await post('/api/v1/tasks', 'return 1', 'text/plain'))).toBe('BAD_REQUEST');
    expect(codeOf(await post('/api/v1/tasks', `{"code":"${'x'.repeat(BODY_LIMIT)}"}`))).toBe(
      'PAYLOAD_TOO_LARGE',
    );
    expect(
      codeOf(await post('/api/v1/tasks/batch', `{"tasks":[{"code":"${'x'.repeat(BODY_LIMIT)}"}]}`)),
    ).toBe('PAYLOAD_TOO_LARGE');

    // Ajv and the runtime name the field the same way.
    const extra = await post('/api/v1/tasks', '{"code":"return 1","colour":"red"}');
    expect(extra.json<ErrorBody>().error.details).toEqual({ field: 'colour' });
    const timeout = await post(
      '/api/v1/tasks',
      '{"code":"return 1","tool_constraints":{"timeout_seconds":1e300}}',
    );
    expect(timeout.json<ErrorBody>().error.details).toEqual({ field: 'tool_constraints.timeout_seconds' });
    const memory = await post(
      '/api/v1/tasks',
      '{"code":"return 1","tool_constraints":{"max_memory_mb":0.001}}',
    );
    expect(memory.json<ErrorBody>().error.details).toEqual({ field: 'tool_constraints.max_memory_mb' });

    // Ids: long, unicode, traversal, empty, bad percent-encoding.
    for (const bad of ['x'.repeat(129), 'x'.repeat(5000)]) {
      expect((await get(`/api/v1/tasks/${bad}`)).statusCode).toBe(400);
      expect((await get(`/api/v1/tasks/${bad}/stream`)).statusCode).toBe(400);
      expect((await get(`/api/v1/batches/${bad}`)).statusCode).toBe(400);
    }
    expect((await get(`/api/v1/tasks/${'x'.repeat(128)}`)).statusCode).toBe(404);
    for (const odd of [encodeURIComponent('täsk-𝌆'), '..%2F..%2Fetc%2Fpasswd', '%2E%2E', 'task_x%00']) {
      expect((await get(`/api/v1/tasks/${odd}`)).statusCode, odd).toBe(404);
      expect((await get(`/api/v1/tasks/${odd}/events`)).statusCode, odd).toBe(404);
      expect((await get(`/api/v1/tasks/${odd}/stream`)).statusCode, odd).toBe(404);
    }
    expect((await get('/api/v1/tasks/../batches/x')).statusCode).toBeLessThan(500);
    expect(codeOf(await get('/api/v1/tasks/%E0%A4%A'))).toBe('BAD_REQUEST');
    expect(codeOf(await get('/api/v1/tasks/'))).toBe('BAD_REQUEST');
    expect(codeOf(await get('/api/v1/batches/'))).toBe('BAD_REQUEST');

    // Cursors: not base64, base64 of not-JSON, of the wrong shape, too long.
    for (const cursor of ['%ZZ', 'abc', Buffer.from('[1]').toString('base64url'), 'x'.repeat(600)]) {
      expect((await get(`/api/v1/tasks?cursor=${cursor}`)).statusCode, cursor).toBe(400);
    }
    expect((await get(`/api/v1/tasks/${done}/events?after=abc`)).statusCode).toBe(400);
    expect((await get(`/api/v1/tasks/${done}/events?limit=0`)).statusCode).toBe(400);
    expect((await get(`/api/v1/tasks/${done}/events?after=999-999`)).json()).toEqual({
      events: [],
      next_after: null,
    });
  });
});
