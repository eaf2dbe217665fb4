/**
 * The runtime evaluated inside every QuickJS VM before guest code. It is a plain string because it must
 * import nothing from the host and must survive any host-side transpiler untouched.
 *
 * Evaluating it yields a function that takes the host callbacks (call, log, done, intl's three and the byte codecs) and the guest's web
 * API factories (guest-web.ts, guest-url.ts, guest-intl.ts, guest-events.ts, guest-base64.ts, guest-fetch.ts), and returns `{ start, run, deliver }`. The callbacks live only in this
 * closure; nothing host-facing stays on the global. Values cross as tagged JSON (see src/codec/value-codec.ts,
 * which this mirrors).
 */
export const GUEST_RUNTIME_SOURCE = String.raw`(function (hostCall, hostLog, hostDone, hostIntl, hostIntlCall, hostIntlCompare, hostBytes, hostCancel, extensions) {
'use strict';
const G = globalThis;
const O = Object;
const { freeze, keys, defineProperty, getOwnPropertyDescriptor, getPrototypeOf, create } = O;
const hasOwn = O.hasOwn;
const ownKeys = Reflect.ownKeys;
const apply = Reflect.apply;
const isArray = Array.isArray;
const stringify = JSON.stringify;
const parse = JSON.parse;
const P = Promise, M = Map, S = Set, D = Date, E = Error, TE = TypeError, N = Number, BI = BigInt, Str = String;
const promiseThen = P.prototype.then;
const promiseReject = P.reject;
const dateGetTime = D.prototype.getTime;
const dateNow = D.now;
const dateToISO = D.prototype.toISOString;
const isNaNFn = N.isNaN;
const mapGet = M.prototype.get, mapSet = M.prototype.set, mapDelete = M.prototype.delete, mapHas = M.prototype.has;
const setAdd = S.prototype.add, setHas = S.prototype.has, setDelete = S.prototype.delete;
const arrayPush = Array.prototype.push, arrayJoin = Array.prototype.join, arrayMap = Array.prototype.map;
const stringIndexOf = Str.prototype.indexOf, stringSlice = Str.prototype.slice;
const fromEntries = O.fromEntries;
const imul = Math.imul;
const isView = ArrayBuffer.isView;
const typedArrayTag = getOwnPropertyDescriptor(getPrototypeOf(Uint8Array).prototype, Symbol.toStringTag).get;
const TAG = '$cc';
const MAX_DEPTH = 200;

const pending = new M();
// A timer's host call id -> { fn, extra, every (an interval's delay, else -1), handle }; a handle (what setTimeout
// and setInterval return) -> the host call id it waits on now.
const timers = new M();
const handles = new M();
let URLClass = null, URLSearchParamsClass = null;

// ---- errors -------------------------------------------------------------------------------------------
class ToolError extends E {
  constructor(message, code, details) {
    super(message);
    defineProperty(this, 'code', { value: code === undefined ? 'TOOL_ERROR' : code, writable: true, enumerable: true, configurable: true });
    if (details !== undefined) defineProperty(this, 'details', { value: details, writable: true, enumerable: true, configurable: true });
  }
}
class NoSuchToolError extends ToolError {}
class ToolValidationError extends ToolError {}
class ToolRejectedError extends ToolError {}
class InputTimeoutError extends ToolError {}
for (const C of [ToolError, NoSuchToolError, ToolValidationError, ToolRejectedError, InputTimeoutError]) {
  defineProperty(C.prototype, 'name', { value: C.name, writable: true, enumerable: false, configurable: true });
}
const errorClasses = { ToolError, NoSuchToolError, ToolValidationError, ToolRejectedError, InputTimeoutError };
function makeToolError(e, site) {
  const C = hasOwn(errorClasses, e.name) ? errorClasses[e.name] : ToolError;
  const err = new C(Str(e.message), Str(e.code), e.details);
  // Its stack is the call's: an uncaught tool error is reported at the program's line that called the tool.
  if (site !== undefined) defineProperty(err, 'stack', { value: site.stack, writable: true, enumerable: false, configurable: true });
  return err;
}

// ---- value codec (mirror of value-codec.ts) -----------------------------------------------------------
function cannotCross(path, what) {
  const err = new TE(path + ': ' + what + ' cannot cross the sandbox boundary');
  defineProperty(err, 'code', { value: 'RESULT_INVALID', enumerable: true });
  return err;
}
// Fast path: JSON.stringify (native) with a replacer that tags what JSON cannot hold. Our tags carry a private
// prototype so the replacer passes them through. On any failure the slow walk below names the offending path.
const TagProto = freeze(create(null));
function tagged(tag, v) { const o = create(TagProto); o[TAG] = tag; if (v !== undefined) o.v = v; return o; }
const arrayFrom = Array.from;
function replacer(key, v) {
  const t = typeof v;
  if (t === 'object') {
    if (v === null || isArray(v)) return v;
    if (getPrototypeOf(v) === TagProto) { const plain = { [TAG]: v[TAG] }; if (hasOwn(v, 'v')) plain.v = v.v; return plain; }
    if (v instanceof M) return tagged('m', arrayFrom(v));
    if (v instanceof S) return tagged('s', arrayFrom(v));
    if (v instanceof P || v instanceof ArrayBuffer || ArrayBuffer.isView(v)) throw new TE('slow');
    if (hasOwn(v, TAG)) { const entries = []; for (const k of keys(v)) apply(arrayPush, entries, [[k, v[k]]]); return tagged('o', entries); }
    return v;
  }
  if (t === 'string') { const raw = this[key]; return raw instanceof D ? tagged('d', (() => { const ms = apply(dateGetTime, raw, []); return isNaNFn(ms) ? null : ms; })()) : v; }
  if (t === 'number') {
    if (v - v === 0) return v === 0 && 1 / v < 0 ? tagged('n', '-0') : v;
    return tagged('n', isNaNFn(v) ? 'NaN' : v > 0 ? 'Infinity' : '-Infinity');
  }
  if (t === 'boolean') return v;
  if (t === 'undefined') return tagged('u');
  if (t === 'bigint') return tagged('b', Str(v));
  throw new TE('slow');
}
function encode(value, root) {
  try { return stringify(value, replacer); } catch (_) { return slowEncode(value, root); }
}
function slowEncode(value, root) {
  const ancestors = new S();
  function walk(v, path, depth) {
    // Like JSON.stringify (the fast path), honour a toJSON method; Date is tagged instead.
    if (typeof v === 'object' && v !== null && !(v instanceof D) && typeof v.toJSON === 'function') v = v.toJSON();
    const t = typeof v;
    if (t === 'string' || t === 'boolean') return v;
    if (t === 'number') {
      if (isNaNFn(v)) return { [TAG]: 'n', v: 'NaN' };
      if (v === Infinity) return { [TAG]: 'n', v: 'Infinity' };
      if (v === -Infinity) return { [TAG]: 'n', v: '-Infinity' };
      if (v === 0 && 1 / v < 0) return { [TAG]: 'n', v: '-0' };
      return v;
    }
    if (t === 'undefined') return { [TAG]: 'u' };
    if (t === 'bigint') return { [TAG]: 'b', v: Str(v) };
    if (t === 'function') throw cannotCross(path, 'a function');
    if (t === 'symbol') throw cannotCross(path, 'a symbol');
    if (v === null) return null;
    if (depth > MAX_DEPTH) throw cannotCross(path, 'nesting deeper than ' + MAX_DEPTH);
    if (apply(setHas, ancestors, [v])) throw cannotCross(path, 'a circular reference');
    apply(setAdd, ancestors, [v]);
    try {
      if (v instanceof D) { const ms = apply(dateGetTime, v, []); return { [TAG]: 'd', v: isNaNFn(ms) ? null : ms }; }
      if (v instanceof M) {
        const out = []; let i = 0;
        for (const [k, x] of v) { apply(arrayPush, out, [[walk(k, path + '<key ' + i + '>', depth + 1), walk(x, path + '.get(' + i + ')', depth + 1)]]); i++; }
        return { [TAG]: 'm', v: out };
      }
      if (v instanceof S) {
        const out = []; let i = 0;
        for (const x of v) { apply(arrayPush, out, [walk(x, path + '<item ' + i + '>', depth + 1)]); i++; }
        return { [TAG]: 's', v: out };
      }
      if (isArray(v)) {
        const out = []; const n = v.length;
        for (let i = 0; i < n; i++) apply(arrayPush, out, [walk(v[i], path + '[' + i + ']', depth + 1)]);
        return out;
      }
      if (v instanceof P) throw cannotCross(path, 'a promise');
      if (v instanceof ArrayBuffer || ArrayBuffer.isView(v)) throw cannotCross(path, 'binary data');
      const out = create(null); let tagged = false;
      for (const k of keys(v)) {
        if (k === TAG) tagged = true;
        defineProperty(out, k, { value: walk(v[k], path + '.' + k, depth + 1), enumerable: true, writable: true, configurable: true });
      }
      if (tagged) { const entries = []; for (const k of keys(out)) apply(arrayPush, entries, [[k, out[k]]]); return { [TAG]: 'o', v: entries }; }
      return out;
    } finally {
      apply(setDelete, ancestors, [v]);
    }
  }
  return stringify(walk(value, root, 0));
}
function define(o, k, v) { defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true }); }
function revive(v) {
  if (typeof v !== 'object' || v === null) return v;
  if (isArray(v)) { const out = []; for (let i = 0; i < v.length; i++) apply(arrayPush, out, [revive(v[i])]); return out; }
  const tag = v[TAG];
  if (typeof tag === 'string') {
    const x = v.v;
    if (tag === 'u') return undefined;
    if (tag === 'n') return x === '-0' ? -0 : N(x);
    if (tag === 'b') return BI(x);
    if (tag === 'd') return new D(typeof x === 'number' ? x : NaN);
    if (tag === 'm') { const m = new M(); for (const [k, y] of x) apply(mapSet, m, [revive(k), revive(y)]); return m; }
    if (tag === 's') { const s = new S(); for (const y of x) apply(setAdd, s, [revive(y)]); return s; }
    if (tag === 'o') { const o = {}; for (const [k, y] of x) define(o, k, revive(y)); return o; }
  }
  const out = {};
  for (const k of keys(v)) define(out, k, revive(v[k]));
  return out;
}
function decode(text) { const v = parse(text); return text.indexOf('"$cc"') === -1 ? v : revive(v); }

// ---- console ------------------------------------------------------------------------------------------
function inspect(v, depth, seen) {
  const t = typeof v;
  if (t === 'string') return depth === 0 ? v : stringify(v);
  if (t === 'bigint') return Str(v) + 'n';
  if (t === 'symbol') return v.toString();
  if (t === 'function') return '[Function ' + (v.name || 'anonymous') + ']';
  if (v === null || t !== 'object') return Str(v);
  if (apply(setHas, seen, [v])) return '[Circular]';
  if (v instanceof E) return (v.name || 'Error') + ': ' + v.message;
  if (v instanceof D) { const ms = apply(dateGetTime, v, []); return isNaNFn(ms) ? 'Invalid Date' : apply(dateToISO, v, []); }
  if (depth > 4) return isArray(v) ? '[Array]' : '[Object]';
  apply(setAdd, seen, [v]);
  try {
    if (isView(v) && apply(typedArrayTag, v, []) !== undefined) {
      const parts = [], n = v.length < 100 ? v.length : 100;
      for (let i = 0; i < n; i++) apply(arrayPush, parts, [inspect(v[i], depth + 1, seen)]);
      if (v.length > n) apply(arrayPush, parts, ['... ' + (v.length - n) + ' more items']);
      return apply(typedArrayTag, v, []) + '(' + v.length + ') [' + (n === 0 ? '' : ' ' + apply(arrayJoin, parts, [', ']) + ' ') + ']';
    }
    if (URLClass !== null && v instanceof URLClass) return 'URL { href: ' + stringify(v.href) + ' }';
    if (URLSearchParamsClass !== null && v instanceof URLSearchParamsClass) {
      const parts = [];
      for (const [k, x] of v) apply(arrayPush, parts, [stringify(k) + ' => ' + stringify(x)]);
      return 'URLSearchParams {' + (parts.length === 0 ? '' : ' ' + apply(arrayJoin, parts, [', ']) + ' ') + '}';
    }
    if (isArray(v)) return '[ ' + apply(arrayJoin, apply(arrayMap, v, [(x) => inspect(x, depth + 1, seen)]), [', ']) + ' ]';
    if (v instanceof M) { const parts = []; for (const [k, x] of v) apply(arrayPush, parts, [inspect(k, depth + 1, seen) + ' => ' + inspect(x, depth + 1, seen)]); return 'Map(' + v.size + ') { ' + apply(arrayJoin, parts, [', ']) + ' }'; }
    if (v instanceof S) { const parts = []; for (const x of v) apply(arrayPush, parts, [inspect(x, depth + 1, seen)]); return 'Set(' + v.size + ') { ' + apply(arrayJoin, parts, [', ']) + ' }'; }
    const parts = [];
    for (const k of keys(v)) apply(arrayPush, parts, [k + ': ' + inspect(v[k], depth + 1, seen)]);
    return parts.length === 0 ? '{}' : '{ ' + apply(arrayJoin, parts, [', ']) + ' }';
  } finally { apply(setDelete, seen, [v]); }
}
function logger(level) {
  return function () {
    const parts = [];
    for (let i = 0; i < arguments.length; i++) apply(arrayPush, parts, [inspect(arguments[i], 0, new S())]);
    hostLog(level, apply(arrayJoin, parts, [' ']));
  };
}
const consoleObject = freeze({ log: logger('log'), info: logger('info'), warn: logger('warn'), error: logger('error'), debug: logger('debug') });

// ---- tools --------------------------------------------------------------------------------------------
// box (fetch with a signal): given the call's id, so the guest can tell the host it gave up on it.
function callTool(index, ns, name, args, json, box) {
  const site = new E();
  return new P((resolve, reject) => {
    let payload = json;
    if (payload === undefined) {
      try { payload = encode(args === undefined ? {} : args, 'args'); }
      catch (e) { reject(new ToolValidationError('invalid arguments for ' + ns + '.' + name + ': ' + e.message, 'TOOL_VALIDATION')); return; }
    }
    const id = hostCall(index, payload);
    if (box !== undefined) box.id = id;
    apply(mapSet, pending, [id, { resolve, reject, site }]);
  });
}
function makeNamespace(ns, names, indexes, params) {
  const target = create(null);
  // A name with a dot (an MCP server's tool, \`github.create_issue\`) is a member of a group object,
  // \`tools.github.create_issue\`; its whole name stays reachable too (\`tools['github.create_issue']\`).
  const groups = create(null);
  for (let i = 0; i < names.length; i++) {
    const dot = apply(stringIndexOf, names[i], ['.']);
    if (dot <= 0) continue;
    const group = apply(stringSlice, names[i], [0, dot]);
    if (!hasOwn(groups, group)) groups[group] = { names: [], indexes: [], params: [], whole: [] };
    apply(arrayPush, groups[group].names, [apply(stringSlice, names[i], [dot + 1])]);
    apply(arrayPush, groups[group].indexes, [indexes[i]]);
    apply(arrayPush, groups[group].params, [params[i]]);
    apply(arrayPush, groups[group].whole, [names[i]]);
  }
  for (const group of keys(groups)) {
    const g = groups[group];
    const members = makeNamespace(ns + '.' + group, g.names, g.indexes, g.params);
    defineProperty(target, group, { value: members, enumerable: true });
    for (let i = 0; i < g.names.length; i++) defineProperty(target, g.whole[i], { value: members[g.names[i]], enumerable: false });
  }
  for (let i = 0; i < names.length; i++) {
    const name = names[i], index = indexes[i], positional = params[i];
    if (apply(stringIndexOf, name, ['.']) > 0) continue;
    // Positional parameters (e.g. input.wait(name, options)) are packed into one argument object.
    const fn = positional === null
      ? { [name]: function (args) { return callTool(index, ns, name, args); } }[name]
      : { [name]: function () {
          const packed = {};
          for (let j = 0; j < positional.length; j++) if (arguments[j] !== undefined) packed[positional[j]] = arguments[j];
          return callTool(index, ns, name, packed);
        } }[name];
    defineProperty(target, name, { value: freeze(fn), enumerable: true });
  }
  freeze(target);
  const listing = apply(arrayJoin, names, [', ']) || '(none)';
  const missing = (k) => freeze(function () {
    return apply(promiseReject, P, [new NoSuchToolError('no tool ' + ns + '.' + k + '; available: ' + listing, 'NO_SUCH_TOOL', { available: names })]);
  });
  return new Proxy(target, {
    get(t, k) {
      if (typeof k === 'symbol' || k === 'then' || k === 'toJSON') return undefined;
      if (hasOwn(t, k)) return t[k];
      return missing(Str(k));
    },
    set() { return false; },
    defineProperty() { return false; },
    deleteProperty() { return false; },
    setPrototypeOf() { return false; },
  });
}

// ---- timers -------------------------------------------------------------------------------------------
// Every timer, an interval's every round included, is a host call (tool index -1): host-mediated, journaled
// and replayed like setTimeout, and counted against maxToolCalls.
const MAX_DELAY = N.MAX_VALUE;
function arm(timer) {
  const id = hostCall(-1, stringify(timer.delay));
  apply(mapSet, timers, [id, timer]);
  apply(mapSet, handles, [timer.handle, id]);
  return id;
}
function addTimer(what, args, every) {
  const fn = args[0], ms = args[1];
  if (typeof fn !== 'function') throw new TE(what + ': callback must be a function');
  const extra = [];
  for (let i = 2; i < args.length; i++) apply(arrayPush, extra, [args[i]]);
  // JSON has no Infinity: past the largest number a delay is that number, which never fires either.
  const delay = N(ms) > 0 ? (N(ms) < MAX_DELAY ? N(ms) : MAX_DELAY) : 0;
  const timer = { fn, extra, delay, every, handle: 0 };
  const id = hostCall(-1, stringify(delay));
  timer.handle = id;
  apply(mapSet, timers, [id, timer]);
  apply(mapSet, handles, [id, id]);
  return id;
}
function setTimeoutFn(fn, ms) { return addTimer('setTimeout', arguments, false); }
function setIntervalFn(fn, ms) { return addTimer('setInterval', arguments, true); }
// Either clears either kind, as in browsers and Node.
function clearTimerFn(handle) {
  const id = apply(mapGet, handles, [handle]);
  if (id === undefined) return;
  apply(mapDelete, handles, [handle]);
  apply(mapDelete, timers, [id]);
}
function fireTimer(id, timer) {
  apply(mapDelete, timers, [id]);
  if (!timer.every) apply(mapDelete, handles, [timer.handle]);
  try { apply(timer.fn, undefined, timer.extra); } catch (e) { finish(false, e); return; }
  // The next round is set after the callback ran, unless it cleared the interval.
  if (timer.every && apply(mapGet, handles, [timer.handle]) === id) arm(timer);
}

// ---- determinism --------------------------------------------------------------------------------------
let rngState = 0;
function random() {
  // mulberry32: small, fast, and identical for identical seeds.
  rngState = (rngState + 0x6d2b79f5) | 0;
  let t = rngState;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
// crypto.getRandomValues and crypto.randomUUID: xoshiro128** on a stream of its own, seeded from the same seed,
// so Math.random's sequence does not depend on whether the program also asked for random bytes.
let c0 = 0, c1 = 0, c2 = 0, c3 = 0;
function seedCrypto(seed) {
  let s = (seed ^ 0x2545f491) | 0;
  function next() {
    s = (s + 0x9e3779b9) | 0;
    let z = s;
    z = imul(z ^ (z >>> 16), 0x85ebca6b);
    z = imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) | 0;
  }
  c0 = next(); c1 = next(); c2 = next(); c3 = next();
}
function next32() {
  const x = imul(c1, 5);
  const result = imul((x << 7) | (x >>> 25), 9);
  const t = c1 << 9;
  c2 ^= c0; c3 ^= c1; c1 ^= c2; c0 ^= c3; c2 ^= t; c3 = (c3 << 11) | (c3 >>> 21);
  return result;
}
function fillRandom(bytes) {
  const n = bytes.length;
  for (let i = 0; i < n; ) {
    let r = next32();
    for (let k = 0; k < 4 && i < n; k++, i++) { bytes[i] = r & 255; r >>>= 8; }
  }
}
let timeOrigin = 0;
const performanceObject = freeze({ now() { return dateNow() - timeOrigin; }, get timeOrigin() { return timeOrigin; } });

// ---- the global surface -------------------------------------------------------------------------------
for (const name of ['SharedArrayBuffer', 'Atomics', 'WeakRef', 'FinalizationRegistry', 'WebAssembly']) delete G[name];
defineProperty(Math, 'random', { value: random, writable: false, enumerable: false, configurable: false });
const globals = { console: consoleObject, performance: performanceObject, setTimeout: setTimeoutFn, clearTimeout: clearTimerFn, setInterval: setIntervalFn, clearInterval: clearTimerFn, ToolError, NoSuchToolError, ToolValidationError, ToolRejectedError, InputTimeoutError };
// The web APIs, Intl, events and fetch (guest-web.ts, guest-url.ts, guest-intl.ts, guest-events.ts, guest-base64.ts, guest-fetch.ts): each factory gets the helpers of the ones before it.
// fetch (guest-fetch.ts) reaches the host through the egress bindings, which only a task with network access has.
let egressIndexes = null;
// json: the arguments already in the wire form (guest-fetch.ts's fetch(url), whose arguments are all plain JSON).
function egressCall(name, args, json, box) {
  if (egressIndexes === null || !hasOwn(egressIndexes, name)) {
    return apply(promiseReject, P, [new ToolError('fetch: this task has no network access (ask for it with tool_constraints.network_access: { allow: [host names] })', 'EGRESS_REFUSED', { reason: 'no_network_access' })]);
  }
  return callTool(egressIndexes[name], 'egress', name, args, json, box);
}
// The program gave up on a call (fetch's signal): the host stops the request; the outcome, when it comes, is dropped.
function egressCancel(id) { if (id > 0) hostCancel(id); }
// A listener's throw is reported, not thrown (as browsers do), so one bad listener does not end the program.
const reportError = (e) => consoleObject.error('Uncaught (in a listener)', e);
const lib = { fillRandom, bytes: hostBytes, intl: hostIntl, intlCall: hostIntlCall, intlCompare: hostIntlCompare, egressCall, egressCancel,
  setTimeout: setTimeoutFn, now: performanceObject.now, reportError };
for (const factory of extensions) {
  const made = factory(lib);
  for (const k of keys(made.globals)) globals[k] = made.globals[k];
  for (const k of keys(made.lib)) lib[k] = made.lib[k];
}
if (hasOwn(globals, 'URL')) { URLClass = globals.URL; URLSearchParamsClass = globals.URLSearchParams; }
for (const k of keys(globals)) defineProperty(G, k, { value: globals[k], writable: true, enumerable: false, configurable: true });

// ---- freeze the intrinsics ----------------------------------------------------------------------------
// Writable data properties that user code commonly overrides on instances become accessors, so freezing
// a prototype does not turn "obj.toString = f" into an error (the "override mistake").
const overridable = ['constructor', 'toString', 'valueOf', 'name', 'message', 'toJSON', 'toLocaleString'];
const visited = new S();
function harden(o) {
  if ((typeof o !== 'object' && typeof o !== 'function') || o === null || o === G || apply(setHas, visited, [o])) return;
  apply(setAdd, visited, [o]);
  for (const k of overridable) {
    const d = getOwnPropertyDescriptor(o, k);
    if (!d || !('value' in d) || !d.writable || !d.configurable) continue;
    const value = d.value;
    const home = o;
    defineProperty(o, k, {
      get() { return value; },
      set(v) {
        if (this === home) throw new TE('Cannot assign to read only property ' + k);
        defineProperty(this, k, { value: v, writable: true, enumerable: true, configurable: true });
      },
      enumerable: d.enumerable,
      configurable: false,
    });
  }
  freeze(o);
  for (const k of ownKeys(o)) {
    const d = getOwnPropertyDescriptor(o, k);
    if (!d) continue;
    if ('value' in d) harden(d.value); else { harden(d.get); harden(d.set); }
  }
  harden(getPrototypeOf(o));
}
const hidden = [
  async function () {}, function* () {}, async function* () {}, (function* () {})(), (async function* () {})(),
  [][Symbol.iterator](), new M().entries(), new S().values(), ''[Symbol.iterator](), /a/g[Symbol.matchAll](''),
  getPrototypeOf(Uint8Array), P.resolve(),
];
for (const k of ownKeys(G)) { if (k !== 'globalThis') { const d = getOwnPropertyDescriptor(G, k); if (d && 'value' in d) harden(d.value); } }
for (const h of hidden) harden(h);

// ---- entry points for the host ------------------------------------------------------------------------
let namespaces = null;
function describe(e) {
  if (e instanceof E) {
    const out = { name: Str(e.name), message: Str(e.message), stack: typeof e.stack === 'string' ? e.stack : '' };
    if (e instanceof ToolError) { out.code = Str(e.code); if (e.details !== undefined) { try { out.details = parse(encode(e.details, 'details')); } catch (_) {} } }
    else if (typeof e.code === 'string' && e.code === 'RESULT_INVALID') out.code = 'RESULT_INVALID';
    return out;
  }
  let message;
  try { message = typeof e === 'string' ? e : inspect(e, 1, new S()); } catch (_) { message = 'a non-error value was thrown'; }
  return { name: 'Error', message: 'Uncaught ' + message, stack: '' };
}
function finish(ok, value) {
  if (ok) {
    let payload;
    try { payload = encode(value, 'result'); }
    catch (e) { hostDone(false, stringify({ name: 'ResultError', code: 'RESULT_INVALID', message: Str(e.message), stack: '' })); return; }
    hostDone(true, payload);
  } else {
    hostDone(false, stringify(describe(value)));
  }
}
return freeze({
  start(seed, bindingsJson) {
    rngState = seed | 0;
    seedCrypto(seed | 0);
    timeOrigin = dateNow();
    const bindings = parse(bindingsJson);
    const byNs = create(null);
    for (let i = 0; i < bindings.length; i++) {
      const b = bindings[i];
      if (!hasOwn(byNs, b.namespace)) byNs[b.namespace] = { names: [], indexes: [], params: [] };
      apply(arrayPush, byNs[b.namespace].names, [b.name]);
      apply(arrayPush, byNs[b.namespace].indexes, [i]);
      apply(arrayPush, byNs[b.namespace].params, [b.params === undefined ? null : b.params]);
    }
    if (!hasOwn(byNs, 'tools')) byNs.tools = { names: [], indexes: [], params: [] };
    // The egress bindings are fetch's, not a namespace of the guest's.
    egressIndexes = null;
    if (hasOwn(byNs, 'egress')) {
      egressIndexes = create(null);
      for (let i = 0; i < byNs.egress.names.length; i++) egressIndexes[byNs.egress.names[i]] = byNs.egress.indexes[i];
      delete byNs.egress;
    }
    namespaces = keys(byNs);
    for (const ns of namespaces) defineProperty(G, ns, { value: makeNamespace(ns, byNs[ns].names, byNs[ns].indexes, byNs[ns].params), writable: false, enumerable: false, configurable: false });
    // Programs written for Cloudflare's Code Mode call their tools as codemode.x(): the same tools.
    if (!hasOwn(byNs, 'codemode')) defineProperty(G, 'codemode', { value: G.tools, writable: false, enumerable: false, configurable: false });
  },
  run(fn) {
    let p;
    try { p = fn(); } catch (e) { finish(false, e); return; }
    apply(promiseThen, p, [(v) => finish(true, v), (e) => finish(false, e)]);
  },
  deliver(id, ok, payload, tagged) {
    const waiter = apply(mapGet, pending, [id]);
    if (waiter !== undefined) {
      apply(mapDelete, pending, [id]);
      // The host tells whether the payload holds a tag: no scan of it here (~12 ns a character interpreted).
      if (ok) waiter.resolve(tagged === false ? parse(payload) : decode(payload)); else waiter.reject(makeToolError(parse(payload), waiter.site));
      return;
    }
    const timer = apply(mapGet, timers, [id]);
    if (timer !== undefined) fireTimer(id, timer);
  },
});
})`;
