import { beforeAll, describe, expect, it } from 'vitest';
import { defineTool } from '../../src/index.ts';
import { readSse } from '../../src/client/sse-reader.ts';
import type { SseMessage } from '../../src/client/sse-reader.ts';
import type { StreamStats } from '../../src/http/sse-stream.ts';
import { until } from '../durable/fixture.ts';
import { useApiFixture } from './api-fixture.ts';
import type { ApiKey } from './api-fixture.ts';
import { rawClient } from './raw-socket.ts';

// Resumable task streams over a real socket on loopback: every event carries its cursor (`id:`), and a client
// that reconnects with it (`Last-Event-ID`) gets exactly what came after: the union of what the two streams
// sent is the journal, each entry once.

const BOUND = 256 * 1024;
const BIG = 'x'.repeat(64 * 1024);

interface Seen {
  readonly seqs: number[];
  lastId: string | undefined;
  /** Each journal event's id is the last seq it carried. */
  readonly idsMatch: boolean[];
}

function collect(seen: Seen, m: SseMessage): void {
  if (m.id !== undefined) seen.lastId = m.id;
  if (m.event !== 'journal') return;
  const entries = JSON.parse(m.data) as { seq: number }[];
  seen.seqs.push(...entries.map((e) => e.seq));
  seen.idsMatch.push(m.id === String(entries.at(-1)?.seq));
}

function textBody(text: string): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(text));
      controller.close();
    },
  });
}

/** The body of a chunked HTTP response as far as whole chunks go (a cut-off one is dropped). */
function dechunk(raw: Buffer): string {
  let at = raw.indexOf('\r\n\r\n') + 4;
  const parts: Buffer[] = [];
  for (;;) {
    const nl = raw.indexOf('\r\n', at);
    if (nl < 0) break;
    const size = parseInt(raw.subarray(at, nl).toString('latin1'), 16);
    if (!Number.isFinite(size) || size === 0 || nl + 2 + size > raw.length) break;
    parts.push(raw.subarray(nl + 2, nl + 2 + size));
    at = nl + 2 + size + 2;
  }
  return Buffer.concat(parts).toString('utf8');
}

describe('resumable task streams (Last-Event-ID)', () => {
  const gates: (() => void)[] = [];
  const stats: StreamStats = { open: 0, maxBufferedBytes: 0, endedSlow: 0 };
  const fx = useApiFixture('http-stream-resume', {
    tools: [
      defineTool({ name: 'tick', description: 'returns', effect: 'read', execute: (a) => a }),
      defineTool({ name: 'big', description: '64 KiB', effect: 'read', execute: () => BIG }),
      defineTool({
        name: 'gate',
        description: 'waits for the test',
        // Its intent is journaled (and streamed) before it runs; a read's would come with its outcome.
        effect: 'idempotent',
        execute: () => new Promise((resolve) => gates.push(() => resolve('open'))),
      }),
    ],
    streams: { bufferBytes: BOUND, maxPerKey: 16, maxPerTenant: 64, stats },
  });
  let base = '';
  let key: ApiKey;
  beforeAll(async () => {
    base = await fx.app.listen({ port: 0, host: '127.0.0.1' });
    key = await fx.key('t-resume');
  });

  const submit = async (code: string): Promise<string> => {
    const created = await fx.app.inject({
      method: 'POST',
      url: '/api/v1/tasks',
      headers: key.headers,
      payload: { code },
    });
    return created.json<{ task_id: string }>().task_id;
  };
  const journalSeqs = async (taskId: string): Promise<number[]> =>
    (await fx.store.readJournal(taskId)).map((e) => e.seq);
  const hasGate = async (taskId: string, n: number): Promise<boolean> =>
    (await fx.store.readJournal(taskId)).filter(
      (e) => e.type === 'tool_intent' && e.data.tool === 'tools.gate',
    ).length >= n;
  const open = (path: string, headers: Record<string, string> = {}, signal?: AbortSignal) =>
    fetch(`${base}${path}`, { headers: { ...key.headers, ...headers }, ...(signal ? { signal } : {}) });

  it('resumes a dropped stream after its Last-Event-ID: nothing lost, nothing repeated', async () => {
    const gatesBefore = gates.length;
    const taskId = await submit(
      'for (let i = 0; i < 5; i++) await tools.tick({ i }); await tools.gate({});' +
        'for (let i = 0; i < 5; i++) await tools.tick({ i }); await tools.gate({});' +
        'for (let i = 0; i < 5; i++) await tools.tick({ i }); return 1;',
    );
    const seen: Seen = { seqs: [], lastId: undefined, idsMatch: [] };
    // From the journal's start (after=0), until the first gate is called; then the socket is dropped.
    const drop = new AbortController();
    const first = await open(`/api/v1/tasks/${taskId}/stream?after=0`, {}, drop.signal);
    expect(first.status).toBe(200);
    try {
      for await (const m of readSse(first.body!, { signal: drop.signal })) {
        collect(seen, m);
        if (m.event === 'journal' && m.data.includes('"tools.gate"')) drop.abort();
      }
    } catch {
      // The abort.
    }
    expect(seen.lastId).toBeDefined();
    // While no one listens: the first gate opens and the task goes on to the second.
    await until(() => gates.length > gatesBefore, 30_000);
    gates[gatesBefore]?.();
    await until(() => hasGate(taskId, 2), 30_000);
    expect((await journalSeqs(taskId)).length).toBeGreaterThan(seen.seqs.length);
    const second = await open(`/api/v1/tasks/${taskId}/stream`, { 'last-event-id': seen.lastId! });
    expect(second.status).toBe(200);
    let released = false;
    const names: string[] = [];
    for await (const m of readSse(second.body!)) {
      names.push(m.event);
      collect(seen, m);
      // Live again: the second gate opens once the resumed stream has caught up with it.
      if (!released && m.event === 'journal' && m.data.includes('"tools.gate"')) {
        released = true;
        await until(() => gates.length > gatesBefore + 1, 30_000);
        gates[gatesBefore + 1]?.();
      }
    }
    expect(released).toBe(true);
    expect(names[0]).toBe('view');
    expect(names.at(-1)).toBe('status');
    expect(seen.seqs).toEqual(await journalSeqs(taskId));
    expect(new Set(seen.seqs).size).toBe(seen.seqs.length);
    expect(seen.idsMatch.every(Boolean)).toBe(true);
    expect((await fx.runtime.get(taskId))?.status).toBe('succeeded');
  }, 120_000);

  it('resumes an ended task from any cursor, by header or by ?after=', async () => {
    const taskId = await submit('for (let i = 0; i < 4; i++) await tools.tick({ i }); return 1;');
    await until(async () => (await fx.runtime.get(taskId))?.status === 'succeeded', 30_000);
    const all = await journalSeqs(taskId);
    for (const [headers, query] of [
      [{ 'last-event-id': '3' }, ''],
      [{}, '?after=3'],
    ] as const) {
      const res = await open(`/api/v1/tasks/${taskId}/stream${query}`, headers);
      const seen: Seen = { seqs: [], lastId: undefined, idsMatch: [] };
      for await (const m of readSse(res.body!)) collect(seen, m);
      expect(seen.seqs).toEqual(all.filter((s) => s > 3));
      expect(seen.lastId).toBe(String(all.at(-1)));
    }
    // A fresh stream of an ended task sends its view only: its journal is in GET /events.
    const fresh = await open(`/api/v1/tasks/${taskId}/stream`);
    const names: string[] = [];
    for await (const m of readSse(fresh.body!)) names.push(m.event);
    expect(names).toEqual(['view']);
  }, 60_000);

  it('refuses a cursor that is not a journal seq, before any event', async () => {
    const taskId = await submit('return 1;');
    for (const [headers, query] of [
      [{ 'last-event-id': 'abc' }, ''],
      [{ 'last-event-id': '-1' }, ''],
      [{}, '?after=1e3'],
      [{}, `?after=${'9'.repeat(20)}`],
    ] as const) {
      const res = await open(`/api/v1/tasks/${taskId}/stream${query}`, headers);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('BAD_REQUEST');
    }
  });

  it('resumes a stream ended for reading too slowly, without loss', async () => {
    const gatesBefore = gates.length;
    const taskId = await submit(
      'await tools.gate({}); for (let i = 0; i < 300; i++) await tools.big({}); return 1;',
    );
    await until(() => gates.length > gatesBefore, 30_000);
    const slowBefore = stats.endedSlow;
    const client = await rawClient(base);
    client.socket.write(
      `GET /api/v1/tasks/${taskId}/stream?after=0 HTTP/1.1\r\nhost: x\r\nauthorization: ${key.headers.authorization}\r\n\r\n`,
    );
    await client.until('event: view');
    // Stop reading, then let the task write ~20 MB of journal: the server ends this stream at its bound.
    client.socket.pause();
    gates[gatesBefore]?.();
    await until(() => stats.endedSlow > slowBefore, 60_000);
    client.socket.resume();
    const raw = await client.closed;
    const seen: Seen = { seqs: [], lastId: undefined, idsMatch: [] };
    for await (const m of readSse(textBody(dechunk(Buffer.from(raw, 'latin1'))))) collect(seen, m);
    expect(seen.lastId).toBeDefined();
    const second = await open(`/api/v1/tasks/${taskId}/stream`, { 'last-event-id': seen.lastId! });
    for await (const m of readSse(second.body!)) collect(seen, m);
    expect((await fx.runtime.get(taskId))?.status).toBe('succeeded');
    const all = await journalSeqs(taskId);
    expect(seen.seqs.length).toBe(all.length);
    expect(seen.seqs).toEqual(all);
    expect(seen.idsMatch.every(Boolean)).toBe(true);
  }, 180_000);

  it('catches up in pages bounded by bytes: no store read of a resume takes much more than 1 MiB', async () => {
    // 40 entries of 64 KiB: one read of 200 entries would take all 2.5 MiB at once.
    const taskId = await submit('for (let i = 0; i < 40; i++) await tools.big({}); return 1;');
    await until(async () => (await fx.runtime.get(taskId))?.status === 'succeeded', 60_000);
    const reads: number[] = [];
    const store = fx.store;
    const readJournal = store.readJournal.bind(store);
    const readJournalPage = store.readJournalPage.bind(store);
    const weigh = (entries: readonly { data: unknown }[]): number =>
      entries.reduce((n, e) => n + JSON.stringify(e.data).length, 0);
    const all = await journalSeqs(taskId);
    store.readJournal = async (...args) => {
      const entries = await readJournal(...args);
      reads.push(weigh(entries));
      return entries;
    };
    store.readJournalPage = async (...args) => {
      const page = await readJournalPage(...args);
      reads.push(weigh(page.entries));
      return page;
    };
    try {
      const res = await open(`/api/v1/tasks/${taskId}/stream`, { 'last-event-id': '0' });
      const seen: Seen = { seqs: [], lastId: undefined, idsMatch: [] };
      for await (const m of readSse(res.body!)) collect(seen, m);
      expect(seen.seqs).toEqual(all);
    } finally {
      store.readJournal = readJournal;
      store.readJournalPage = readJournalPage;
    }
    expect(reads.length).toBeGreaterThan(1);
    expect(Math.max(...reads)).toBeLessThan(1024 * 1024 + 2 * BIG.length);
  }, 60_000);

  it('takes a cursor past the journal as its end: entries written later are sent, not skipped', async () => {
    const gatesBefore = gates.length;
    const taskId = await submit(
      'await tools.gate({}); for (let i = 0; i < 3; i++) await tools.tick({ i }); return 1;',
    );
    await until(() => gates.length > gatesBefore, 30_000);
    const res = await open(`/api/v1/tasks/${taskId}/stream`, { 'last-event-id': '999999' });
    expect(res.status).toBe(200);
    const seen: Seen = { seqs: [], lastId: undefined, idsMatch: [] };
    const reading = (async () => {
      for await (const m of readSse(res.body!)) collect(seen, m);
    })();
    await until(() => seen.lastId !== undefined, 30_000);
    const before = await journalSeqs(taskId);
    expect(seen.lastId).toBe(String(before.at(-1)));
    gates[gatesBefore]?.();
    await reading;
    expect(seen.seqs).toEqual((await journalSeqs(taskId)).filter((s) => s > (before.at(-1) ?? 0)));
    expect(seen.seqs.length).toBeGreaterThan(0);
  }, 60_000);
});
