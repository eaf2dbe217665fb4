import { connect, createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, defineTool } from '../../src/index.ts';
import type { StreamEvent } from '../../src/client/index.ts';
import { until } from '../durable/fixture.ts';
import { useApiFixture } from './api-fixture.ts';

// The client's task stream resumes by itself: a TCP proxy between it and the server cuts every connection
// mid-task, and the stream goes on after its Last-Event-ID, each journal entry yielded once.

/** Forwards to `target`; `cut()` destroys every connection open now (as a network drop would). */
async function proxy(target: URL): Promise<{ url: string; cut: () => number; server: Server }> {
  const open = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect({ host: target.hostname, port: Number(target.port) });
    open.add(client);
    client.on('close', () => open.delete(client));
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${address.port}`,
    server,
    cut: () => {
      const n = open.size;
      for (const s of open) s.destroy();
      return n;
    },
  };
}

describe('client stream resume', () => {
  const gates: (() => void)[] = [];
  const fx = useApiFixture('http-client-resume', {
    tools: [
      defineTool({ name: 'tick', description: 'returns', effect: 'read', execute: (a) => a }),
      defineTool({
        name: 'gate',
        description: 'waits for the test',
        effect: 'read',
        execute: () => new Promise((resolve) => gates.push(() => resolve('open'))),
      }),
    ],
  });
  let cutter: Awaited<ReturnType<typeof proxy>>;
  beforeAll(async () => {
    cutter = await proxy(new URL(await fx.app.listen({ port: 0, host: '127.0.0.1' })));
  });
  afterAll(() => new Promise<void>((resolve) => cutter.server.close(() => resolve())));

  it('yields every journal entry once across a dropped connection, and the end', async () => {
    const key = await fx.key('t-client');
    const client = createClient({ url: cutter.url, key: key.key });
    const { task_id } = await client.submit({
      code:
        'await tools.gate({}); for (let i = 0; i < 5; i++) await tools.tick({ i }); await tools.gate({});' +
        'for (let i = 0; i < 5; i++) await tools.tick({ i }); return 1;',
    });
    await until(() => gates.length >= 1, 30_000);
    const events: StreamEvent[] = [];
    let cuts = 0;
    for await (const event of client.stream(task_id)) {
      events.push(event);
      if (event.type === 'view') gates[0]?.();
      const gated = event.type === 'journal' && event.entries.some((e) => e.data.tool === 'tools.gate');
      if (gated && cuts === 0) {
        // The second gate was called: cut the connection, then let the task go on while the client reconnects.
        cuts = cutter.cut();
        await until(() => gates.length >= 2, 30_000);
        gates[1]?.();
      }
    }
    expect(cuts).toBeGreaterThan(0);
    const seqs = events.flatMap((e) => (e.type === 'journal' ? e.entries.map((x) => x.seq) : []));
    const journal = (await fx.store.readJournal(task_id)).map((e) => e.seq);
    // From after the first view's checkpoint to the end, each once, in order.
    expect(seqs).toEqual(journal.slice(journal.length - seqs.length));
    expect(seqs.length).toBeGreaterThan(10);
    expect(events[0]?.type).toBe('view');
    expect(events.filter((e) => e.type === 'view')).toHaveLength(1);
    const last = events.at(-1);
    expect(last?.type === 'status' && last.view.status).toBe('succeeded');
  }, 120_000);
});
