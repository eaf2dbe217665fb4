// A response from the host as the guest reads it (issue 21): its headers and body are decoded on first use (the
// body kept as the host's base64 until then, text() and json() straight from it), so every way of reading one must
// give what Node's own fetch gives for the same response from a real server on loopback: text of every size and
// of invalid UTF-8 or a BOM, JSON, bytes, a stream, clones and a body read twice; and fetch(url), which skips the
// Request, must send the host the very arguments (as text) that journals written before hold.
import { createServer } from 'node:http';
import type { AddressInfo, Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEgress, createQuickJsDriver, runProgram } from '../src/internal.ts';
import type { QuickJsDriver } from '../src/internal.ts';
import { answerBytes, BYTES_BASE64_TEXT } from '../src/sandbox/quickjs/bytes-host.ts';
import { EGRESS_BINDINGS } from '../src/spec/index.ts';

const bodies: Record<string, Buffer> = {
  json: Buffer.from(
    JSON.stringify({ ok: true, items: Array.from({ length: 20 }, (_, i) => ({ i, name: `ï ${i}` })) }),
  ),
  short: Buffer.from('ok'),
  empty: Buffer.alloc(0),
  bom: Buffer.concat([
    Buffer.from([0xef, 0xbb, 0xbf]),
    Buffer.from('text after a byte order mark, long enough'),
  ]),
  invalid: Buffer.from(
    Array.from({ length: 300 }, (_, i) => (i % 7 === 0 ? 0xff : i % 3 === 0 ? 0xc3 : 65 + (i % 26))),
  ),
  binary: Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 37) % 256)),
};

let server: Server;
let base = '';
let driver: QuickJsDriver;
const egress = createEgress({ allowPrivate: true });
let access: { allow: string[]; allowHttp: boolean };

beforeAll(async () => {
  const http = createServer((req, res) => {
    const body = bodies[(req.url ?? '').slice(1)] ?? Buffer.from('missing');
    res.sendDate = false;
    res
      .writeHead(200, 'Fine', { 'content-type': 'application/octet-stream', 'x-a': '1', 'x-b': 'two' })
      .end(body);
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  server = http;
  const port = (http.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
  access = { allow: [`127.0.0.1:${port}`], allowHttp: true };
  driver = createQuickJsDriver({ workers: 1, warmVmsPerWorker: 1 });
  await driver.ready();
});
afterAll(async () => {
  await driver.close();
  server.close();
});

async function guest(code: string): Promise<unknown> {
  const r = await runProgram({ driver, code, network: { egress, access } });
  if (r.status !== 'succeeded') throw new Error(`${r.error.code}: ${r.error.message}`);
  return r.value;
}

/** What a program reads of each body, run in the guest and in Node (its own fetch) alike. */
const reading = `
  const out = {};
  for (const name of NAMES) {
    const r = await fetch(BASE + '/' + name);
    const headers = [...r.headers].filter(([k]) => k.startsWith('x-') || k === 'content-type' || k === 'content-length');
    const c = r.clone();
    const text = await r.text();
    let again; try { await r.json(); again = 'read'; } catch (e) { again = e instanceof TypeError; }
    const bytes = Array.from(new Uint8Array(await c.arrayBuffer()));
    const chunks = [];
    for await (const chunk of (await fetch(BASE + '/' + name)).body ?? []) chunks.push(...chunk);
    out[name] = { status: r.status, ok: r.ok, statusText: r.statusText, headers, text, again, used: r.bodyUsed,
      bytes, chunks };
  }
  out.json = await (await fetch(BASE + '/json')).json();
  return out;`;

describe('a response from the host in the guest', () => {
  it('reads as Node reads it: text, JSON, bytes, a stream, a clone, a second read refused', async () => {
    // The BOM included: text() drops it, as the standard and Node do.
    const names = JSON.stringify(Object.keys(bodies));
    const code = `const BASE = ${JSON.stringify(base)}, NAMES = ${names};\n${reading}`;
    const node = await ((0, eval)(`(async () => { ${code} })`) as () => Promise<unknown>)();
    expect(await guest(code)).toEqual(JSON.parse(JSON.stringify(node)));
  });

  it('a status read alone, headers shared by a clone, the body decoded once', async () => {
    expect(
      await guest(`
        const r = await fetch(${JSON.stringify(`${base}/json`)});
        const c = r.clone();
        const same = r.headers === c.headers && r.headers === r.headers;
        const first = await r.bytes(), second = await c.bytes();
        let frozen; try { r.headers.set('x-a', '2'); frozen = 'no'; } catch (e) { frozen = e instanceof TypeError; }
        return { status: r.status, same, frozen, equal: first.length === second.length && first.every((b, i) => b === second[i]),
          a: r.headers.get('X-A'), url: r.url, redirected: r.redirected, type: r.type };`),
    ).toEqual({
      status: 200,
      same: true,
      frozen: true,
      equal: true,
      a: '1',
      url: `${base}/json`,
      redirected: false,
      type: 'basic',
    });
  });

  it('the host turns base64 into text in one call as TextDecoder does, and refuses what is not base64', () => {
    for (const body of Object.values(bodies)) {
      expect(answerBytes(BYTES_BASE64_TEXT, { text: body.toString('base64') })).toBe(
        new TextDecoder('utf-8', { ignoreBOM: true }).decode(body),
      );
    }
    expect(answerBytes(BYTES_BASE64_TEXT, { text: 'QU*D' })).toBeNull();
    expect(answerBytes(BYTES_BASE64_TEXT, { text: 'QUJDR' })).toBeNull();
    expect(answerBytes(BYTES_BASE64_TEXT, { bytes: new Uint8Array(4) })).toBeNull();
  });

  it('fetch(url) sends the host the arguments a Request would, as the journals already hold them', async () => {
    const sent: string[] = [];
    const url = 'https://api.example.com/a?b=1';
    const r = await driver.execute({
      code: `for (const f of [() => fetch(URL_), () => fetch(URL_, {}), () => fetch(new Request(URL_)), () => fetch(URL_, { method: 'get' })]) await f();
        return (await fetch(URL_)).status;`.replaceAll('URL_', JSON.stringify(url)),
      language: 'javascript',
      tools: EGRESS_BINDINGS,
      host: {
        call: (call) => {
          if (call.kind === 'tool') sent.push(`${call.name} ${call.argsJson ?? ''}`);
          const value = {
            status: 204,
            statusText: '',
            headers: [],
            url,
            redirected: false,
            body: '',
            allowedBy: 'x',
          };
          return Promise.resolve({ ok: true, value });
        },
      },
    });
    expect(r).toMatchObject({ status: 'succeeded', value: 204 });
    const wire = `read {"url":${JSON.stringify(url)},"method":"GET","headers":[],"body":null,"redirect":"follow"}`;
    expect(sent).toEqual([wire, wire, wire, wire, wire]);
  });
});
