// fetch's classes in the quickjs guest (issue 21): Headers, Request and Response, checked against Node's own
// (undici, the WHATWG Fetch standard) as the oracle; and fetch itself in a task without network access.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createQuickJsDriver, runProgram } from '../src/internal.ts';
import type { QuickJsDriver } from '../src/internal.ts';

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
/** The same async function body in the guest and in Node. */
async function both(body: string): Promise<[unknown, unknown]> {
  const fn = (0, eval)(`(async () => { ${body} })`) as () => Promise<unknown>;
  const node = await fn();
  return [await value(body), JSON.parse(JSON.stringify(node)) as unknown];
}

describe('Headers, Request and Response in the guest', () => {
  const cases: Record<string, string> = {
    'headers: case, order, joins and set-cookie': `
      const h = new Headers({ 'X-B': '1', 'x-a': ' 2 ' });
      h.append('x-b', '3'); h.append('Set-Cookie', 'a=1'); h.append('set-cookie', 'b=2');
      const seen = []; h.forEach((v, k) => seen.push(k + '=' + v));
      return { get: h.get('X-B'), has: h.has('x-a'), missing: h.get('nope'), entries: [...h], seen,
        cookies: h.getSetCookie(), keys: [...h.keys()] };`,
    'headers: set and delete': `
      const h = new Headers([['a', '1'], ['A', '2'], ['b', '3']]);
      h.set('a', '9'); h.delete('B');
      return [...h.entries()];`,
    'headers: invalid names and values throw TypeError': `
      const out = [];
      for (const f of [() => new Headers({ 'bad name': 'x' }), () => new Headers({ a: 'x\\r\\ny' }), () => new Headers([['a']])])
        try { f(); out.push('no'); } catch (e) { out.push(e instanceof TypeError); }
      return out;`,
    'request: defaults, method normalised, body and content type': `
      const r = new Request('https://example.com/a?b=1', { method: 'post', body: 'hi' });
      return { url: r.url, method: r.method, ct: r.headers.get('content-type'), redirect: r.redirect,
        text: await r.text(), used: r.bodyUsed };`,
    'request: GET with a body and a relative URL are refused': `
      const out = [];
      for (const f of [() => new Request('https://x.com', { body: 'a' }), () => new Request('/relative'),
        () => new Request('https://x.com', { method: 'CONNECT' })])
        try { f(); out.push('no'); } catch (e) { out.push(e instanceof TypeError); }
      return out;`,
    'request: URLSearchParams body': `
      const r = new Request('https://x.com', { method: 'PUT', body: new URLSearchParams({ a: '1 2', b: 'é' }) });
      return [r.headers.get('content-type'), await r.text()];`,
    'response: status, ok, json, bytes and reuse': `
      const r = new Response('{"a":[1,2]}', { status: 201, statusText: 'Made', headers: { 'X-Y': 'z' } });
      const c = r.clone();
      const j = await r.json();
      let again; try { await r.text(); again = 'no'; } catch (e) { again = e instanceof TypeError; }
      const ab = await c.arrayBuffer();
      return { status: r.status, ok: r.ok, st: r.statusText, j, again, len: ab.byteLength, ct: r.headers.get('content-type'),
        xy: r.headers.get('x-y') };`,
    'response: Response.json, redirect, error and bad status': `
      const j = Response.json({ a: 1 }, { status: 202 });
      const rd = Response.redirect('https://x.com/a', 307);
      let bad; try { new Response('x', { status: 99 }); bad = 'no'; } catch (e) { bad = e instanceof RangeError; }
      let nobody; try { new Response('x', { status: 204 }); nobody = 'no'; } catch (e) { nobody = e instanceof TypeError; }
      return { j: [j.status, j.headers.get('content-type'), await j.text()], rd: [rd.status, rd.headers.get('location')],
        err: [Response.error().status, Response.error().type], bad, nobody };`,
    'response: bytes of a typed array body': `
      const r = new Response(new Uint8Array([0, 255, 7]));
      return [...new Uint8Array(await r.arrayBuffer())];`,
  };
  for (const [name, body] of Object.entries(cases)) {
    it(name, async () => {
      const [guest, node] = await both(body);
      expect(guest).toEqual(node);
    });
  }
});

describe('fetch without network access', () => {
  it('rejects with a catchable EGRESS_REFUSED naming the constraint', async () => {
    const out = await value(`
      try { await fetch('https://example.com/'); return 'fetched'; }
      catch (e) { return { name: e.name, code: e.code, reason: e.details && e.details.reason, message: e.message }; }`);
    expect(out).toMatchObject({ code: 'EGRESS_REFUSED', reason: 'no_network_access' });
    expect((out as { message: string }).message).toMatch(/network_access/);
  });
  it('a body reads whole or as a stream (reader, for await); a null body has no stream', async () => {
    expect(await value(`const r = new Response('x'); return [r.body === null, await r.text()];`)).toEqual([
      false,
      'x',
    ]);
    expect(
      await value(`
        const r = new Response('héllo');
        const reader = r.body.getReader();
        let locked; try { r.body.getReader(); locked = 'no'; } catch (e) { locked = e instanceof TypeError; }
        const first = await reader.read(), second = await reader.read();
        let used; try { await r.text(); used = 'no'; } catch (e) { used = e instanceof TypeError; }
        const chunks = [];
        for await (const c of new Response('abc').body) chunks.push([...c]);
        return { first: [first.done, first.value.length], second: second.done, locked, used, bodyUsed: r.bodyUsed,
          chunks, none: new Response(null).body };`),
    ).toEqual({
      first: [false, 6],
      second: true,
      locked: true,
      used: true,
      bodyUsed: true,
      chunks: [[97, 98, 99]],
      none: null,
    });
  });
  it('an invalid request is a TypeError before anything is asked of the host', async () => {
    expect(await value(`try { await fetch('nope'); } catch (e) { return e instanceof TypeError; }`)).toBe(
      true,
    );
  });
});
