// The guest's byte codecs answered by the host (bytes-host.ts) for inputs of 32 bytes or more: the answers must be
// the ones Node's Encoding API gives and the ones the guest's own code gives for short inputs, byte for byte, on
// random input with invalid sequences, lone surrogates and views into larger buffers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createQuickJsDriver, runProgram } from '../src/internal.ts';
import type { QuickJsDriver } from '../src/internal.ts';
import { answerBytes, BYTES_BASE64_DECODE } from '../src/sandbox/quickjs/bytes-host.ts';

let driver: QuickJsDriver;
beforeAll(async () => {
  driver = createQuickJsDriver({ workers: 1, warmVmsPerWorker: 1 });
  await driver.ready();
});
afterAll(() => driver.close());

async function value(code: string): Promise<unknown> {
  const r = await runProgram({ driver, code });
  if (r.status !== 'succeeded') throw new Error(`${r.error.code}: ${r.error.message}`);
  return r.value;
}

/** A deterministic byte soup: mostly valid UTF-8 of all widths, with stray continuation and lead bytes. */
function soup(seed: number, length: number): number[] {
  let x = seed;
  const next = (): number => (x = (x * 1103515245 + 12345) % 2147483648) / 2147483648;
  const out: number[] = [];
  const pieces = [
    [0x41],
    [0xc3, 0xa9],
    [0xe6, 0x97, 0xa5],
    [0xf0, 0x9f, 0x98, 0x80],
    [0x80],
    [0xff],
    [0xed, 0xa0, 0x80],
    [0xf0, 0x9f],
    [0xef, 0xbb, 0xbf],
  ];
  while (out.length < length) out.push(...(pieces[Math.floor(next() * pieces.length)] ?? []));
  return out.slice(0, length);
}

describe('native byte codecs in the guest', () => {
  const inputs = [0, 5, 31, 32, 33, 200, 5000].flatMap((n) => [soup(n + 1, n), soup(n + 7, n)]);

  it('TextDecoder (lenient, fatal, BOM or not) and Response.text() decode as Node does, at every size', async () => {
    const decode = `(bytes) => {
  const buffer = new Uint8Array(bytes.length + 10); buffer.set(bytes, 5);
  const view = buffer.subarray(5, 5 + bytes.length);
  const out = [];
  for (const options of [{}, { ignoreBOM: true }, { fatal: true }]) {
    try { out.push(new TextDecoder('utf-8', options).decode(view)); } catch (e) { out.push(e.name); }
  }
  return out;
}`;
    const oracle = (0, eval)(`(${decode})`) as (bytes: number[]) => unknown;
    const expected = inputs.map((b) => oracle(b));
    const got = await value(`
const decode = ${decode};
const inputs = ${JSON.stringify(inputs)};
const texts = await Promise.all(inputs.map((b) => new Response(new Uint8Array(b)).text()));
return [inputs.map(decode), texts];`);
    // Response.text() decodes as the Fetch standard says: UTF-8 with a leading byte order mark dropped.
    const texts = await Promise.all(inputs.map((b) => new Response(new Uint8Array(b)).text()));
    expect(got).toEqual([expected, texts]);
  });

  it('TextEncoder encodes long strings with lone surrogates as Node does', async () => {
    const strings = [
      'a'.repeat(40),
      'héllo wörld '.repeat(10),
      '😀x\ud800y'.repeat(20),
      '\udc00'.repeat(33),
      'x'.repeat(31) + '\ud83d',
    ];
    const encoded = strings.map((s) => Array.from(new TextEncoder().encode(s)));
    const got = await value(
      `return ${JSON.stringify(strings)}.map((s) => Array.from(new TextEncoder().encode(s)));`,
    );
    expect(got).toEqual(encoded);
  });

  it('a long Request body is the UTF-8 Node makes', async () => {
    const body = 'ünïcode '.repeat(50);
    const got = await value(
      `return Array.from(new Uint8Array(await new Request('https://example.com/', { method: 'POST', body: ${JSON.stringify(body)} }).arrayBuffer()));`,
    );
    expect(got).toEqual(Array.from(Buffer.from(body)));
  });

  it('keeps nothing of an answer once the program drops it: 100 MiB decoded and encoded in a 16 MiB VM', async () => {
    const r = await runProgram({
      driver,
      limits: { memoryBytes: 16 * 1024 * 1024 },
      code: `
const big = new Uint8Array(1 << 20).fill(65);
let n = 0;
for (let i = 0; i < 50; i++) n += new TextDecoder().decode(big).length + new TextEncoder().encode('é'.repeat(1 << 19)).length;
for (let i = 0; i < 2000; i++) n += (1234.5).toLocaleString('de').length;
return n;`,
    });
    expect(r).toMatchObject({ status: 'succeeded', value: 50 * 2 * (1 << 20) + 2000 * 7 });
  });

  it('the host refuses base64 that is not, so the guest meets its own error', () => {
    expect(answerBytes(BYTES_BASE64_DECODE, { text: 'QUJD' })).toEqual(new Uint8Array([65, 66, 67]));
    expect(answerBytes(BYTES_BASE64_DECODE, { text: 'QU*D' })).toBeNull();
    expect(answerBytes(BYTES_BASE64_DECODE, { text: 'QUJDR' })).toBeNull();
    expect(answerBytes(BYTES_BASE64_DECODE, { bytes: new Uint8Array(1) })).toBeNull();
  });
});
