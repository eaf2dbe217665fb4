// The web platform APIs of the quickjs guest (issue 19): URL, URLSearchParams, TextEncoder, TextDecoder,
// structuredClone, crypto, setInterval. Each runs in the real driver; where Node has the same API (WHATWG URL,
// Encoding, structured clone), Node's answer is the oracle, with the few places Node 20 (Ada 2.9) departs from
// the standard checked against the standard instead.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createQuickJsDriver, defineTool, runProgram } from '../src/internal.ts';
import type { ExecutionLimits, QuickJsDriver } from '../src/internal.ts';

let driver: QuickJsDriver;
beforeAll(async () => {
  driver = createQuickJsDriver({ workers: 2, warmVmsPerWorker: 2 });
  await driver.ready();
});
afterAll(() => driver.close());

/** Evaluates a guest snippet in Node too (its oracle). */
function evaluate<T>(code: string): T {
  return (0, eval)(`(${code})`) as T;
}
async function run(code: string, options: { seed?: number; limits?: Partial<ExecutionLimits> } = {}) {
  return runProgram({ driver, code, ...options });
}
async function value(code: string, seed?: number): Promise<unknown> {
  const r = await run(code, seed === undefined ? {} : { seed });
  if (r.status !== 'succeeded') throw new Error(`${r.error.code}: ${r.error.message}`);
  return r.value;
}

const PARTS = [
  'href',
  'origin',
  'protocol',
  'username',
  'password',
  'host',
  'hostname',
  'port',
  'pathname',
  'search',
  'hash',
] as const;
type Parts = Record<(typeof PARTS)[number] | 'params', string> | 'failure';

/** What Node's URL makes of each [input, base]. */
function nodeParts(cases: readonly (readonly [string, string | undefined])[]): Parts[] {
  return cases.map(([input, base]) => {
    let u: URL;
    try {
      u = new URL(input, base);
    } catch {
      return 'failure';
    }
    const out: Record<string, string> = { params: u.searchParams.toString() };
    for (const k of PARTS) out[k] = u[k];
    return out;
  });
}
const GUEST_PARTS = `(cases) => cases.map(([input, base]) => {
  let u;
  try { u = base === null ? new URL(input) : new URL(input, base); } catch (e) {
    if (!(e instanceof TypeError)) throw e;
    return 'failure';
  }
  const out = { params: u.searchParams.toString() };
  for (const k of ${JSON.stringify(PARTS)}) out[k] = u[k];
  return out;
})`;
async function guestParts(cases: readonly (readonly [string, string | undefined])[]): Promise<Parts[]> {
  const json = JSON.stringify(cases.map(([i, b]) => [i, b ?? null]));
  return (await value(`return (${GUEST_PARTS})(${json});`)) as Parts[];
}

/** A seeded corpus from URL fragments: schemes, slashes, userinfo, hosts, ports, paths, queries, fragments. */
function corpus(n: number, seed: number): [string, string | undefined][] {
  let s = seed;
  const rnd = (k: number) => (s = (s * 48271) % 2147483647) % k;
  const pick = <T>(a: readonly T[]): T => a[rnd(a.length)] as T;
  const schemes = [
    'http:',
    'https:',
    'file:',
    'ftp:',
    'ws:',
    'wss:',
    'foo:',
    'blob:',
    'HTTP:',
    'data:',
    'sc:',
    '',
  ];
  const slashes = ['//', '/', '', '\\\\', '///', '/\\', '\\/', '////'];
  const userinfo = ['', 'user@', 'user:pass@', ':@', 'u%40:p@', 'a b:c d@', '@', 'us@er@', 'ü:ß@', '::@'];
  const hosts = [
    'example.com',
    'EXAMPLE.com',
    '127.0.0.1',
    '0x7f.1',
    '1.2.3',
    '4294967295',
    '4294967296',
    '[::1]',
    '[1:2:3:4:5:6:7:8]',
    '[::ffff:192.168.0.1]',
    '[1::]',
    '[0:0:0:0:1:0:0:0]',
    'bücher.de',
    'xn--bcher-kva.de',
    '%41.com',
    'a..b',
    '',
    'localhost',
    'a%zz',
    'exa mple',
    'ex<ample',
    '0',
    '09',
    '0x',
    '1.2.3.4.5',
    '1.2.3.256',
    '[1:2::3:4]',
    '[:1]',
    'ＡＢＣ.com',
    '日本.jp',
    'a.b.c.',
    '%e2%98%83',
    'xn--',
    'faß.de',
  ];
  const ports = ['', ':80', ':443', ':8080', ':', ':0', ':65535', ':65536', ':08', ':a', ':21'];
  const paths = [
    '',
    '/',
    '/a/b/c',
    '/a/./b/../c',
    '/a/%2e%2E/b',
    '/a b',
    '/ü',
    '/a/b/',
    '/C:/x',
    '/c|/x',
    '/./',
    'x/y',
    '/%zz',
    '/{}|^`',
    '/a\\b',
    '/a?b',
    '/\'"<>',
  ];
  const queries = ['', '?', '?a=1&b=2', '?a b', "?'x'", '?ü=ö', '?a=%zz', '?#', '?a+b=c+d', '?x=1&x=2'];
  const fragments = ['', '#', '#frag', '#a b', '#ü', '#`', '#?x'];
  // Bases without an opaque path: Node 20 resolves some relative inputs against those where it must fail.
  const bases = [
    undefined,
    'http://example.org/foo/bar',
    'https://u:p@h:1/a/b?q#f',
    'file:///C:/dir/file',
    'file://host/dir/file',
    'foo://x/a/b',
    'http://example.org/',
  ];
  const relatives = [
    '',
    'x',
    './x',
    '../x',
    '../../../x',
    '/x',
    '//x',
    '?q',
    '#f',
    'x?q#f',
    '\\x',
    '\\\\x\\y',
  ];
  const more = [
    ':x',
    'C:x',
    'c|/x',
    '/c:/x',
    '..',
    '.',
    '%2e',
    'http:x',
    'file:x',
    'foo:x',
    ' \t x \n',
    '?',
    '#',
  ];
  const out: [string, string | undefined][] = [];
  for (let i = 0; i < n; i++) {
    if (rnd(3) === 0) {
      const rel = pick([...relatives, ...more]) + (rnd(2) ? pick(paths) : '') + (rnd(3) ? '' : pick(queries));
      out.push([rel, pick(bases)]);
      continue;
    }
    const s2 =
      pick(schemes) +
      pick(slashes) +
      pick(userinfo) +
      pick(hosts) +
      pick(ports) +
      pick(paths) +
      pick(queries) +
      pick(fragments);
    out.push([rnd(4) === 0 ? ` \t${s2}\n ` : s2, rnd(2) ? undefined : pick(bases)]);
  }
  return out;
}

describe('URL in the guest', () => {
  it('parses and resolves as Node does: a corpus of special, non-special, file, IPv4, IPv6 and IDN URLs', async () => {
    const cases = corpus(1500, 19);
    const expected = nodeParts(cases);
    const got = await guestParts(cases);
    const differs = cases.filter((_, i) => JSON.stringify(got[i]) !== JSON.stringify(expected[i]));
    expect(differs).toEqual([]);
    // The corpus is not all failures or all successes.
    expect(expected.filter((p) => p === 'failure').length).toBeGreaterThan(100);
    expect(expected.filter((p) => p !== 'failure').length).toBeGreaterThan(800);
  }, 30_000);

  it('follows the standard where Node 20 departs from it', async () => {
    const cases: [string, string | undefined][] = [
      // A relative URL against a base with an opaque path fails unless it is only a fragment.
      ['x#f', 'sc:x/y'],
      ['x?#', 'mailto:x'],
      ['#f', 'mailto:x'],
      // ".." that empties a non-special path leaves the empty segment: sc://h/ (Node: sc://h).
      ['sc://h/..', undefined],
      ['sc://h/..?q', undefined],
    ];
    const got = (await guestParts(cases)).map((p) => (p === 'failure' ? p : p.href));
    expect(got).toEqual(['failure', 'failure', 'mailto:x#f', 'sc://h/', 'sc://h/?q']);
  });

  it('has the URL API: searchParams stays linked, setters, statics, errors, JSON and console', async () => {
    const r = (await value(`
const u = new URL('../x?a=1&b=%C3%BC#h', 'https://user:pw@Example.COM:8443/p/q/r');
const out = { first: u.href, origin: u.origin, b: u.searchParams.get('b') };
u.searchParams.append('c', 'd e');
u.searchParams.delete('a');
out.linked = u.href;
u.search = '?z=1';
out.params = [...u.searchParams];
u.hash = '';
u.port = '443';
u.protocol = 'http';
u.username = 'a b';
u.pathname = '/one/../two';
u.hostname = 'bücher.de';
out.set = u.href;
u.href = 'ws://h/p?k=v';
out.href = [u.href, u.searchParams.get('k')];
try { u.href = 'no scheme'; } catch (e) { out.badHref = [e.name, u.href]; }
try { new URL('http://a b/'); } catch (e) { out.invalid = [e.name, e.code, e.message]; }
out.statics = [URL.canParse('x'), URL.canParse('x', 'http://a/'), URL.parse('::'), URL.parse('/p', 'http://a/').href];
out.json = JSON.stringify({ u });
out.tag = [String(u), Object.prototype.toString.call(u), Object.prototype.toString.call(u.searchParams)];
out.enumerable = Object.keys(Object.getOwnPropertyDescriptors(URL.prototype)).filter((k) => Object.getOwnPropertyDescriptor(URL.prototype, k).enumerable).join(',');
console.log(u, u.searchParams);
return out;`)) as Record<string, unknown>;
    expect(r).toEqual({
      first: 'https://user:pw@example.com:8443/p/x?a=1&b=%C3%BC#h',
      origin: 'https://example.com:8443',
      b: 'ü',
      linked: 'https://user:pw@example.com:8443/p/x?b=%C3%BC&c=d+e#h',
      params: [['z', '1']],
      set: 'http://a%20b:pw@xn--bcher-kva.de/two?z=1',
      href: ['ws://h/p?k=v', 'v'],
      badHref: ['TypeError', 'ws://h/p?k=v'],
      invalid: ['TypeError', 'ERR_INVALID_URL', 'Invalid URL: http://a b/'],
      statics: [false, true, null, 'http://a/p'],
      json: '{"u":"ws://h/p?k=v"}',
      tag: ['ws://h/p?k=v', '[object URL]', '[object URLSearchParams]'],
      enumerable:
        'href,origin,protocol,username,password,host,hostname,port,pathname,search,searchParams,hash',
    });
  });

  it('setters behave as Node: host, hostname, port, pathname, search, hash, protocol, credentials', async () => {
    const starts = [
      'http://u:p@example.org:81/a/b?q=1#f',
      'https://example.com/',
      'file:///C:/x/y',
      'sc://h/p?q',
    ];
    const starts2 = ['mailto:a@b', 'sc:opaque path ?q#f', 'data:text/plain,hi  ', 'sc:x  #f'];
    const values = [
      '',
      'https',
      'file',
      'sc',
      'ftp:',
      'h t',
      'example.com:8080',
      '[::1]:9',
      'x@y',
      '8080',
      '8080abc',
      '99999',
      '/a/../b',
      'a b',
      '?x=1',
      '#y',
      'ü',
      '%zz',
      'localhost',
      'C:',
      '\\x',
      'é.com',
      'a#b?c',
      '1.2.3.4',
    ];
    const setters = [
      'protocol',
      'username',
      'password',
      'host',
      'hostname',
      'port',
      'pathname',
      'search',
      'hash',
    ];
    const cases: [string, string, string][] = [];
    for (const start of [...starts, ...starts2])
      for (const k of setters) for (const v of values) cases.push([start, k, v]);
    // Where Node 20 departs from the standard: a port that does not start with a digit clears the port; a host
    // of a non-special URL with a port (":" then anything) sets no port.
    const kept = cases.filter(
      ([start, k, v]) =>
        !(k === 'port' && !/^[0-9]/.test(v)) &&
        !(k === 'host' && /:[^0-9]/.test(v)) &&
        !(k === 'host' && start.startsWith('sc:') && v.includes(':')),
    );
    const expected = kept.map(([start, k, v]) => {
      const u = new URL(start) as unknown as Record<string, string>;
      u[k] = v;
      return u.href;
    });
    const got = (await value(
      `return ${JSON.stringify(kept)}.map(([start, k, v]) => { const u = new URL(start); u[k] = v; return u.href; });`,
    )) as string[];
    expect(kept.filter((_, i) => got[i] !== expected[i]).map((c, i) => [...c, got[i], expected[i]])).toEqual(
      [],
    );
    expect(kept.length).toBeGreaterThan(500);
  }, 30_000);

  it('the standard on the setters Node 20 departs from', async () => {
    const got = await value(`
const set = (href, k, v) => { const u = new URL(href); u[k] = v; return u.href; };
return [set('http://h:81/', 'port', 'x1'), set('http://h:81/', 'port', ':80'), set('sc://h/p', 'host', 'e:8'), set('http://h/', 'host', 'e:x1')];`);
    expect(got).toEqual(['http://h:81/', 'http://h:81/', 'sc://e:8/p', 'http://e/']);
  });
});

describe('URLSearchParams in the guest', () => {
  it('parses, serializes, sorts and edits as Node does', async () => {
    const inits: unknown[] = [
      '',
      '?a=1&b=2&a=3',
      'a=b c&d=%zz&e=%C3%A9&f=+&g',
      '&&=x&y=&=',
      'q=%F0%9F%98%80&r=\u00e9',
      [
        ['a b', "~*-._!'()"],
        ['x', 'ü'],
      ],
      { 'a b': 'c&d', z: '1', y: '2' },
    ];
    const script = (init: unknown) => `(() => {
const p = new URLSearchParams(${JSON.stringify(init)});
const out = [p.toString(), [...p], p.size];
p.append('z', 'last'); p.append('a', 'again'); p.sort(); out.push(p.toString(), [...p.keys()], [...p.values()]);
out.push(p.get('a'), p.getAll('a'), p.has('a'), p.has('a', 'nope'), p.get('none'));
p.set('a', 'one'); out.push(p.toString());
p.delete('z', 'last'); p.delete('y'); out.push(p.toString());
const seen = []; p.forEach((v, k) => seen.push(k + ':' + v)); out.push(seen);
return out;
})()`;
    const expected = inits.map((init) => evaluate<unknown>(script(init)));
    const got = await value(`return [${inits.map(script).join(',')}];`);
    expect(got).toEqual(expected);
  });

  it('rejects a pair that is not two items and iterates live', async () => {
    const got = await value(`
let pair;
try { new URLSearchParams([['a']]); } catch (e) { pair = e.name; }
const p = new URLSearchParams('a=1&b=2');
const seen = [];
for (const [k] of p) { seen.push(k); if (k === 'a') p.append('c', '3'); }
return { pair, seen, iter: typeof p.entries().map };`);
    expect(got).toEqual({ pair: 'TypeError', seen: ['a', 'b', 'c'], iter: 'function' });
  });
});

describe('TextEncoder and TextDecoder in the guest', () => {
  const BYTES = [
    [0x68, 0xc3, 0xa9, 0xf0, 0x9f, 0x98, 0x80],
    [0xef, 0xbb, 0xbf, 0x41],
    [0xff, 0x41, 0xc0, 0x80, 0xed, 0xa0, 0x80, 0xe0, 0x80],
    [0xf0, 0x9f, 0x98],
    [0xf4, 0x90, 0x80, 0x80, 0x41],
    [0x3d, 0xd8, 0x00, 0xde, 0x41, 0x00],
    [0x80, 0x9f, 0xa0, 0xff],
  ];
  it('decodes as Node does: utf-8, utf-16le/be, windows-1252; fatal, ignoreBOM and streamed in pieces', async () => {
    const cases: [number[], string, boolean, boolean, number][] = [];
    for (const bytes of BYTES)
      for (const enc of ['utf-8', 'utf-16le', 'utf-16be', 'latin1'])
        for (const fatal of [false, true])
          for (const ignoreBOM of [false, true])
            cases.push([bytes, enc, fatal, ignoreBOM, bytes.length >> 1]);
    const decode = `(D, [bytes, enc, fatal, ignoreBOM, cut]) => {
  try {
    const d = new D(enc, { fatal, ignoreBOM });
    const b = new Uint8Array(bytes);
    const streamed = d.decode(b.subarray(0, cut), { stream: true }) + d.decode(b.subarray(cut));
    const again = d.decode(b.buffer);
    return [streamed, again, d.encoding, d.fatal, d.ignoreBOM];
  } catch (e) { return e.name; }
}`;
    // Node 20 decodes latin1 in one call as ISO-8859-1 and drops 0x80-0x9F; the streamed call is windows-1252.
    const expected = cases.map((c) => {
      const out = evaluate<(D: typeof TextDecoder, c: unknown) => unknown[] | string>(decode)(TextDecoder, c);
      if (c[1] === 'latin1' && Array.isArray(out)) out[1] = out[0];
      return out;
    });
    const got = await value(`return ${JSON.stringify(cases)}.map((c) => (${decode})(TextDecoder, c));`);
    expect(got).toEqual(expected);
  });

  it('encodes as Node does, lone surrogates as U+FFFD, and encodeInto stops before a code point that does not fit', async () => {
    const strings = ['', 'abc', 'héllo', '日本', '😀x', 'a\ud800b', '\udc00', 'x\ud83d'];
    const script = `(E) => ${JSON.stringify(strings)}.map((s) => {
  const into = [];
  for (const size of [0, 1, 2, 3, 4, 5]) { const d = new Uint8Array(size); const r = new E().encodeInto(s, d); into.push([r.read, r.written, Array.from(d)]); }
  return [Array.from(new E().encode(s)), into];
})`;
    const expected = evaluate<(E: typeof TextEncoder) => unknown>(script)(TextEncoder);
    expect(await value(`return (${script})(TextEncoder);`)).toEqual(expected);
  });

  it('rejects an unknown label with a RangeError and fatal input with a TypeError', async () => {
    const got = await value(`
const out = {};
try { new TextDecoder('shift_jis'); } catch (e) { out.label = e.name; }
try { new TextDecoder('utf-8', { fatal: true }).decode(new Uint8Array([0xc3])); } catch (e) { out.fatal = e.name; }
out.enc = new TextEncoder().encoding;
out.labels = [' UTF8 ', 'unicode-1-1-utf-8', 'ascii', 'utf-16'].map((l) => new TextDecoder(l).encoding);
return out;`);
    expect(got).toEqual({
      label: 'RangeError',
      fatal: 'TypeError',
      enc: 'utf-8',
      labels: ['utf-8', 'utf-8', 'windows-1252', 'utf-16le'],
    });
  });
});

describe('structuredClone in the guest', () => {
  it('clones Map, Set, Date, RegExp, buffers and views, errors, wrappers, sparse arrays and cycles', async () => {
    const got = await value(`
const buf = new ArrayBuffer(8);
const a = new Uint8Array(buf, 2, 4); a.set([1, 2, 3, 4]);
const v = new DataView(buf);
const src = { m: new Map([[{ k: 1 }, new Date(5)]]), s: new Set([1, 'x']), r: /a+/gi, a, v, e: new RangeError('bad', { cause: 7 }),
  n: Object(3), str: Object('s'), big: 10n, sparse: [1, , 3], neg: -0, nan: NaN, u: undefined, nested: [[[[[1]]]]] };
src.self = src; src.m.set('back', src);
src.r.lastIndex = 2;
const c = structuredClone(src);
return {
  fresh: c !== src && c.m !== src.m && c.a !== src.a,
  cycle: c.self === c && c.m.get('back') === c,
  map: [...c.m].map(([k, x]) => [k, x instanceof Date ? x.getTime() : 'same']),
  set: [...c.s],
  regexp: [c.r.source, c.r.flags, c.r.lastIndex, c.r instanceof RegExp],
  sharedBuffer: c.a.buffer === c.v.buffer && c.a.buffer !== buf,
  view: [c.a.byteOffset, Array.from(c.a), c.v.byteLength, c.a instanceof Uint8Array, c.v instanceof DataView],
  error: [c.e instanceof RangeError, c.e.message, c.e.cause],
  wrappers: [typeof c.n, c.n + 1, typeof c.str, String(c.str)],
  prims: [c.big, Object.is(c.neg, -0), Number.isNaN(c.nan), 'u' in c, c.u],
  sparse: [c.sparse.length, 1 in c.sparse],
  nested: c.nested[0][0][0][0][0],
};`);
    expect(got).toEqual({
      fresh: true,
      cycle: true,
      map: [
        [{ k: 1 }, 5],
        ['back', 'same'],
      ],
      set: [1, 'x'],
      regexp: ['a+', 'gi', 0, true],
      sharedBuffer: true,
      view: [2, [1, 2, 3, 4], 8, true, true],
      error: [true, 'bad', 7],
      wrappers: ['object', 4, 'object', 's'],
      prims: [10n, true, true, true, undefined],
      sparse: [3, false],
      nested: 1,
    });
  });

  it('throws DataCloneError for functions, symbols, promises and weak collections; clones deep nesting without the stack', async () => {
    const got = await value(`
const names = [];
for (const v of [() => 1, Symbol('s'), { f() {} }, Promise.resolve(), new WeakMap(), new WeakSet()]) {
  try { structuredClone(v); names.push('cloned'); } catch (e) { names.push(e instanceof DOMException ? e.name : 'other ' + e.name); }
}
let deep = {}; const root = deep;
for (let i = 0; i < 20000; i++) { deep.next = {}; deep = deep.next; }
const c = structuredClone(root);
let depth = 0; for (let x = c; x.next; x = x.next) depth++;
const plain = structuredClone(new (class Point { constructor() { this.x = 1; } })());
const buf = new Uint8Array([1, 2]).buffer;
const moved = structuredClone({ buf }, { transfer: [buf] });
return { names, depth, plain: [Object.getPrototypeOf(plain) === Object.prototype, plain.x], transfer: [buf.byteLength, Array.from(new Uint8Array(moved.buf))] };`);
    expect(got).toEqual({
      names: [
        'DataCloneError',
        'DataCloneError',
        'DataCloneError',
        'DataCloneError',
        'DataCloneError',
        'DataCloneError',
      ],
      depth: 20000,
      plain: [true, 1],
      transfer: [0, [1, 2]],
    });
  });
});

describe('crypto in the guest', () => {
  const PROGRAM = `return {
  uuids: [crypto.randomUUID(), crypto.randomUUID()],
  bytes: Array.from(crypto.getRandomValues(new Uint8Array(12))),
  words: Array.from(crypto.getRandomValues(new Uint32Array(2))),
  big: crypto.getRandomValues(new BigUint64Array(1))[0] > 0n,
  random: Math.random(),
};`;
  it('randomUUID is a version 4 UUID; both come from the seed; Math.random does not depend on them', async () => {
    const a = (await value(PROGRAM, 5)) as { uuids: string[]; bytes: number[]; random: number };
    const b = (await value(PROGRAM, 5)) as typeof a;
    const c = (await value(PROGRAM, 6)) as typeof a;
    expect(b).toEqual(a);
    expect(c.uuids).not.toEqual(a.uuids);
    expect(c.bytes).not.toEqual(a.bytes);
    for (const u of a.uuids)
      expect(u).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(a.uuids[0]).not.toBe(a.uuids[1]);
    expect(new Set(a.bytes).size).toBeGreaterThan(6);
    expect(a.random).toBe(await value('return Math.random();', 5));
  });

  it('getRandomValues takes integer typed arrays of at most 65536 bytes', async () => {
    const got = await value(`
const out = [];
for (const make of [() => new Float64Array(2), () => new DataView(new ArrayBuffer(2)), () => [1, 2], () => new Uint8Array(65537)]) {
  try { crypto.getRandomValues(make()); out.push('ok'); } catch (e) { out.push(e.name); }
}
const a = new Uint8Array(65536);
out.push(crypto.getRandomValues(a) === a, Object.isFrozen(crypto), typeof crypto.subtle);
return out;`);
    expect(got).toEqual([
      'TypeMismatchError',
      'TypeMismatchError',
      'TypeError',
      'QuotaExceededError',
      true,
      true,
      'undefined',
    ]);
  });
});

describe('setInterval in the guest', () => {
  it('ticks until cleared (from its callback or outside), with its extra arguments; clearTimeout clears it too', async () => {
    const got = await value(`
const ticks = [];
await new Promise((resolve) => {
  const h = setInterval((tag) => { ticks.push(tag); if (ticks.length === 3) { clearInterval(h); resolve(); } }, 5, 'a');
});
let other = 0;
const h2 = setInterval(() => { other++; }, 5);
await new Promise((r) => setTimeout(r, 40));
clearTimeout(h2);
const after = other;
await new Promise((r) => setTimeout(r, 30));
let never = 0;
const h3 = setInterval(() => { never++; }, 1);
clearInterval(h3);
await new Promise((r) => setTimeout(r, 20));
return { ticks, stopped: other === after && other > 0, never, ids: typeof h2 };`);
    expect(got).toEqual({ ticks: ['a', 'a', 'a'], stopped: true, never: 0, ids: 'number' });
  });

  it('every round is a host call: an interval never cleared ends at maxToolCalls; a throwing callback fails the execution', async () => {
    const limited = await run('setInterval(() => {}, 0); await new Promise(() => {});', {
      limits: { maxToolCalls: 20, timeoutMs: 5_000 },
    });
    expect(limited.status === 'failed' && limited.error.code).toBe('TOOL_CALL_LIMIT');
    const thrown = await run(
      "let n = 0; setInterval(() => { if (++n === 2) throw new Error('second tick'); }, 1); await new Promise(() => {});",
    );
    expect(thrown.status === 'failed' && thrown.error.message).toContain('second tick');
    const callback = await run("setInterval('code', 1); return 1;");
    expect(callback.status === 'failed' && callback.error.message).toContain('callback must be a function');
  });

  it('the result does not wait for an interval that is still running', async () => {
    const tool = defineTool({ name: 'noop', description: '', effect: 'read', execute: () => null });
    const r = await runProgram({
      driver,
      code: 'setInterval(() => {}, 10); await tools.noop(); return "done";',
      tools: [tool],
    });
    expect(r.status === 'succeeded' && r.value).toBe('done');
  });
});

describe('the web APIs are frozen like the other intrinsics', () => {
  it('no tool namespace takes their names; a crypto namespace hides the global', async () => {
    const tool = (namespace: string) =>
      defineTool({ name: 'price', namespace, description: '', effect: 'read', execute: () => 42 });
    for (const name of ['URL', 'setInterval', 'structuredClone', 'TextDecoder']) {
      expect(() => tool(name)).toThrow(/reserved name/);
    }
    const r = await runProgram({
      driver,
      code: 'return [await crypto.price(), await crypto.randomUUID().catch((e) => e.name)];',
      tools: [tool('crypto')],
    });
    expect(r.status === 'succeeded' && r.value).toEqual([42, 'NoSuchToolError']);
  });

  it('their prototypes and the crypto object cannot be changed; instances can', async () => {
    const got = await value(`
const frozen = [URL, URL.prototype, URLSearchParams.prototype, TextEncoder.prototype, TextDecoder.prototype, crypto, structuredClone, setInterval].every(Object.isFrozen);
let threw = false;
try { URL.prototype.toString = () => 'x'; } catch { threw = true; }
const u = new URL('http://a/');
u.toString = () => 'own';
const proto = Object.isFrozen(Object.getPrototypeOf(new URLSearchParams().entries()));
return { frozen, threw, own: String(u), proto };`);
    expect(got).toEqual({ frozen: true, threw: true, own: 'own', proto: true });
  });
});
