// Large bodies of a one-off run (runProgram, `codecall run`; ADR 0046 amended 2026-12-06): streamed to files of a
// temporary directory made for the run, read by ranges, the directory gone when the run ends, however it ends.
// A real server on loopback, the quickjs driver, real files.
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEgress, createQuickJsDriver, defineTool, runProgram } from '../../src/internal.ts';
import type { QuickJsDriver } from '../../src/internal.ts';
import { fileBodies } from '../../src/tools/file-bodies.ts';
import { startServer } from './servers.ts';

const SIZE = 5 * 1024 * 1024 + 13;
const byteAt = (i: number): number => (i * 31 + (i >> 9)) & 0xff;
const body = Buffer.from(Array.from({ length: SIZE }, (_, i) => byteAt(i)));
let expectedSum = 0;
for (let i = 0; i < SIZE; i += 1000) expectedSum += byteAt(i);

let driver: QuickJsDriver;
let parent = '';
beforeAll(async () => {
  driver = createQuickJsDriver({ workers: 1, warmVmsPerWorker: 1 });
  await driver.ready();
  parent = await mkdtemp(join(os.tmpdir(), 'one-off-bodies-'));
});
afterAll(async () => {
  await driver.close();
  await rm(parent, { recursive: true, force: true });
});

/** What the run's body directory holds while the program runs (a host tool the program calls). */
const peek = defineTool({
  name: 'peek',
  description: 'the files of the run body directories',
  input: { type: 'object', properties: {} },
  effect: 'read',
  execute: async () => {
    const out: { name: string; size: number }[] = [];
    for (const dir of await readdir(parent))
      for (const name of await readdir(join(parent, dir)))
        out.push({ name, size: (await stat(join(parent, dir, name))).size });
    return out;
  },
});

describe('one-off run bodies on disk', () => {
  it('a 5 MiB body goes to a file named by its digest, the guest reads every byte, the directory is removed', async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.end(body);
    });
    const r = await runProgram({
      driver,
      tools: [peek],
      code: `const res = await fetch('${server.url('/big')}');
        let n = 0, sum = 0;
        for await (const c of res.body) { for (let i = (1000 - n % 1000) % 1000; i < c.length; i += 1000) sum += c[i]; n += c.length; }
        const files = await tools.peek({});
        return { n, sum, files };`,
      network: {
        egress: createEgress({ allowPrivate: true }),
        access: { allow: [`127.0.0.1:${server.port}`], allowHttp: true },
        bodiesDir: parent,
      },
      limits: { memoryBytes: 32 * 1024 * 1024 },
    });
    expect(r.status, JSON.stringify(r)).toBe('succeeded');
    const value = (r as { value: { n: number; sum: number; files: { name: string; size: number }[] } }).value;
    expect(value.n).toBe(SIZE);
    expect(value.sum).toBe(expectedSum);
    expect(value.files).toEqual([{ name: expect.stringMatching(/^[0-9a-f]{64}$/) as string, size: SIZE }]);
    expect(await readdir(parent)).toEqual([]);
  });

  it('a run that fails still removes its bodies', async () => {
    const server = await startServer((_req, res) => res.end(body));
    const r = await runProgram({
      driver,
      code: `await fetch('${server.url('/big')}'); throw new Error('after the fetch');`,
      network: {
        egress: createEgress({ allowPrivate: true }),
        access: { allow: [`127.0.0.1:${server.port}`], allowHttp: true },
        bodiesDir: parent,
      },
    });
    expect(r).toMatchObject({ status: 'failed' });
    expect(await readdir(parent)).toEqual([]);
  });

  it('past the bytes a run may keep: EGRESS_LIMIT (held_bytes), the upload deleted; ranges read back exactly', async () => {
    const bodies = fileBodies({ parent, maxHeldBytes: 600 * 1024 });
    const signal = new AbortController().signal;
    async function* source(size: number): AsyncGenerator<Uint8Array> {
      for (let at = 0; at < size; at += 100_000)
        yield await Promise.resolve(body.subarray(at, Math.min(size, at + 100_000)));
    }
    const ref = await bodies.put(source(500 * 1024), { signal });
    expect(ref.size).toBe(500 * 1024);
    expect(Buffer.from((await bodies.read(ref.sha256, { offset: 1000, length: 70_000, signal }))!)).toEqual(
      body.subarray(1000, 71_000),
    );
    expect(await bodies.read('0'.repeat(64), { offset: 0, length: 1, signal })).toBeNull();
    await expect(bodies.put(source(200 * 1024), { signal })).rejects.toMatchObject({
      code: 'EGRESS_LIMIT',
      details: { limit: 'held_bytes' },
    });
    const [dir] = await readdir(parent);
    expect(await readdir(join(parent, dir!))).toEqual([ref.sha256]);
    await bodies.close();
    expect(await readdir(parent)).toEqual([]);
  });
});
