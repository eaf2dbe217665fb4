// Event, EventTarget, AbortController and AbortSignal in the quickjs guest, with Node's own as the oracle where
// both behave as the DOM standard says; and fetch's `signal`: a program stops waiting when it aborts, and a signal
// aborted before the call sends nothing.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEgress, createQuickJsDriver, runProgram } from '../src/internal.ts';
import type { QuickJsDriver } from '../src/internal.ts';

let driver: QuickJsDriver;
beforeAll(async () => {
  driver = createQuickJsDriver({ workers: 1, warmVmsPerWorker: 1 });
  await driver.ready();
});
afterAll(() => driver.close());

async function outcome(
  code: string,
  network?: Parameters<typeof runProgram>[0]['network'],
): Promise<unknown> {
  const r = await runProgram({ driver, code, ...(network ? { network } : {}) });
  if (r.status !== 'succeeded') throw new Error(`${r.error.code}: ${r.error.message}`);
  return r.value;
}

/** Runs `body` (an async function's body) here and in the guest: the answers must be equal. */
async function same(body: string): Promise<void> {
  const here = await ((0, eval)(`(async () => { ${body} })`) as () => Promise<unknown>)();
  expect(await outcome(body)).toEqual(JSON.parse(JSON.stringify(here)) as unknown);
}

describe('events in the guest', () => {
  it('dispatches to listeners in order, once, deduplicated, removed, objects with handleEvent', async () => {
    await same(`
const t = new EventTarget(); const seen = [];
const a = (e) => seen.push('a', e.type, e.target === t, e.currentTarget === t, e.eventPhase);
t.addEventListener('x', a); t.addEventListener('x', a);
t.addEventListener('x', { handleEvent(e) { seen.push('obj', this !== t); } });
t.addEventListener('x', () => seen.push('once'), { once: true });
t.addEventListener('y', () => seen.push('y'));
const e = new Event('x');
seen.push(t.dispatchEvent(e), e.currentTarget, e.eventPhase);
t.dispatchEvent(new Event('x'));
t.removeEventListener('x', a);
t.dispatchEvent(new Event('x'));
return seen;`);
  });

  it('cancels a cancelable event only, stops immediate propagation, and refuses a second dispatch while one runs', async () => {
    await same(`
const t = new EventTarget(); const seen = [];
t.addEventListener('c', (e) => { e.preventDefault(); seen.push(e.defaultPrevented); });
t.addEventListener('c', (e) => { e.stopImmediatePropagation(); });
t.addEventListener('c', () => seen.push('never'));
seen.push(t.dispatchEvent(new Event('c', { cancelable: true })), t.dispatchEvent(new Event('c')));
const e = new Event('d');
t.addEventListener('d', () => { try { t.dispatchEvent(e); } catch (err) { seen.push(err instanceof Error); } });
t.dispatchEvent(e);
seen.push(Event.AT_TARGET, new Event('z').bubbles, typeof new Event('z').timeStamp);
try { new Event(); } catch (err) { seen.push(err.name); }
return seen;`);
  });

  it('aborts a controller once with its reason, removes listeners by signal, and combines signals with any()', async () => {
    await same(`
const c = new AbortController(); const seen = [];
const t = new EventTarget();
t.addEventListener('p', () => seen.push('p'), { signal: c.signal });
c.signal.addEventListener('abort', (e) => seen.push(e.type, c.signal.reason));
c.abort('why'); c.abort('again');
t.dispatchEvent(new Event('p'));
seen.push(c.signal.aborted, c.signal.reason);
try { c.signal.throwIfAborted(); } catch (e) { seen.push('thrown ' + e); }
const d = new AbortController(); d.abort();
seen.push(d.signal.reason.name, d.signal.reason.message, d.signal.reason instanceof DOMException);
const x = new AbortController(), y = new AbortController();
const any = AbortSignal.any([x.signal, y.signal]);
y.abort('y'); x.abort('x');
seen.push(any.aborted, any.reason, AbortSignal.abort(1).reason);
try { new AbortSignal(); } catch (e) { seen.push(e.name); }
seen.push(Object.prototype.toString.call(c.signal), c.signal instanceof EventTarget);
return seen;`);
  });

  it('times out with a TimeoutError from the guest clock', async () => {
    await same(`
const s = AbortSignal.timeout(5);
const before = s.aborted;
await new Promise((r) => setTimeout(r, 30));
return [before, s.aborted, s.reason.name, s.reason.message];`);
  });

  it("ends fetch's wait when its signal aborts, and sends nothing for a signal already aborted", async () => {
    const requests: string[] = [];
    const server = createServer((req, res) => {
      requests.push(req.url ?? '');
      if (req.url === '/slow') setTimeout(() => res.end('late'), 300);
      else res.end('quick');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const network = {
      egress: createEgress({ allowPrivate: true }),
      access: { allow: [`127.0.0.1:${port}`], allowHttp: true },
    };
    try {
      const got = await outcome(
        `
const base = 'http://127.0.0.1:${port}';
const out = [];
try { await fetch(base + '/slow', { signal: AbortSignal.timeout(20) }); out.push('no'); } catch (e) { out.push(e.name); }
const c = new AbortController(); c.abort(new Error('stop'));
try { await fetch(base + '/never', { signal: c.signal }); } catch (e) { out.push(e.message); }
try { await fetch(base + '/never', { signal: 'nope' }); } catch (e) { out.push(e.name); }
out.push(await (await fetch(base + '/quick', { signal: new AbortController().signal })).text());
return out;`,
        network,
      );
      expect(got).toEqual(['TimeoutError', 'stop', 'TypeError', 'quick']);
      expect(requests).toEqual(['/slow', '/quick']);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
