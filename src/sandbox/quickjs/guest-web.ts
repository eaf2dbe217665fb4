/**
 * Web platform APIs of the guest that are pure functions of their inputs: TextEncoder, TextDecoder,
 * structuredClone and crypto (randomUUID, getRandomValues). A plain string like guest-runtime.ts, evaluated once
 * into the template VM (ADR 0005): a cold start does not compile it.
 *
 * Evaluating it yields a factory the runtime calls with its `lib` before it freezes the intrinsics:
 * `lib.fillRandom(u8)` fills bytes from the execution's seed (so crypto replays exactly). It returns
 * `{ globals, lib }`: the globals to install and helpers for the factories after it (guest-url.ts uses the UTF-8
 * codec). Every intrinsic it uses is captured here, before any guest code runs.
 */
export const GUEST_WEB_SOURCE = String.raw`(function (lib) {
'use strict';
const O = Object, Str = String, TE = TypeError, RE = RangeError, U8 = Uint8Array, AB = ArrayBuffer, DV = DataView;
const M = Map, S = Set, D = Date, RX = RegExp, P = Promise, WM = WeakMap, WS = WeakSet, DOMEx = DOMException, E = Error;
const { defineProperty, getOwnPropertyDescriptor, getPrototypeOf, keys, freeze } = O;
const apply = Reflect.apply;
const isArray = Array.isArray;
const isView = AB.isView;
const fromCharCode = Str.fromCharCode;
const getter = (o, k) => { const d = getOwnPropertyDescriptor(o, k); return d === undefined ? undefined : d.get; };
const TA = getPrototypeOf(U8);
const taTag = getter(TA.prototype, Symbol.toStringTag);
const taBuffer = getter(TA.prototype, 'buffer'), taOffset = getter(TA.prototype, 'byteOffset');
const taLength = getter(TA.prototype, 'length'), taByteLength = getter(TA.prototype, 'byteLength');
const dvBuffer = getter(DV.prototype, 'buffer'), dvOffset = getter(DV.prototype, 'byteOffset');
const dvByteLength = getter(DV.prototype, 'byteLength');
const abByteLength = getter(AB.prototype, 'byteLength'), abSlice = AB.prototype.slice;
const abResizable = getter(AB.prototype, 'resizable'), abMax = getter(AB.prototype, 'maxByteLength');
const abDetached = getter(AB.prototype, 'detached'), abTransfer = AB.prototype.transfer;
const detached = (b) => abDetached !== undefined && apply(abDetached, b, []);
const mapSize = getter(M.prototype, 'size'), setSize = getter(S.prototype, 'size');
const mapEntries = M.prototype.entries, setValues = S.prototype.values, mapSet = M.prototype.set, setAdd = S.prototype.add;
const mapGet = M.prototype.get;
const dateGetTime = D.prototype.getTime;
const rxSource = getter(RX.prototype, 'source'), rxFlags = getter(RX.prototype, 'flags');
const wmHas = WM.prototype.has, wsHas = WS.prototype.has, wmGet = WM.prototype.get, wmSet = WM.prototype.set;
const boxes = [
  [Boolean, Boolean.prototype.valueOf], [Number, Number.prototype.valueOf], [Str, Str.prototype.valueOf],
  [BigInt, BigInt.prototype.valueOf],
];
const symbolValueOf = Symbol.prototype.valueOf;
const ERRORS = { Error, EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError };
const VIEWS = { Int8Array, Uint8Array, Uint8ClampedArray, Int16Array, Uint16Array, Int32Array, Uint32Array,
  Float16Array: typeof Float16Array === 'function' ? Float16Array : undefined, Float32Array, Float64Array,
  BigInt64Array, BigUint64Array };
const INTEGER_VIEWS = ['Int8Array', 'Uint8Array', 'Uint8ClampedArray', 'Int16Array', 'Uint16Array', 'Int32Array',
  'Uint32Array', 'BigInt64Array', 'BigUint64Array'];
function brand(fn, v) { try { apply(fn, v, []); return true; } catch (_) { return false; } }
function brand1(fn, v) { try { apply(fn, v, [v]); return true; } catch (_) { return false; } }
function viewName(v) { return apply(taTag, v, []); }

// ---- native codecs (bytes-host.ts) --------------------------------------------------------------------
// Interpreted, a codec costs ~0.5 us a byte; the host answers in a call that costs ~2 us. It answers null for what
// it will not do (an invalid input, the VM out of memory): the code below then does it, and fails as it always did.
const hostBytes = lib.bytes;
const NATIVE_MIN = 32, NATIVE_MAX = 16 * 1024 * 1024;
const toWellFormed = Str.prototype.toWellFormed;
/** bytes (a Uint8Array) as the host gets them (it copies whole buffers), or null to do it here. */
function nativeInput(bytes) {
  const n = apply(taByteLength, bytes, []);
  if (n < NATIVE_MIN || n > NATIVE_MAX) return null;
  const buffer = apply(taBuffer, bytes, []), offset = apply(taOffset, bytes, []);
  if (detached(buffer)) return null;
  return offset === 0 && n === apply(abByteLength, buffer, []) ? buffer : apply(abSlice, buffer, [offset, offset + n]);
}
/** UTF-8 of a Uint8Array by the host (without BOM handling), or null. */
function nativeDecode(bytes, fatal) {
  const input = nativeInput(bytes);
  return input === null ? null : hostBytes(fatal ? 1 : 0, input);
}
/** base64 of a Uint8Array by the host, or null. */
function nativeBase64(bytes) {
  const input = nativeInput(bytes);
  return input === null ? null : hostBytes(4, input);
}
/** The bytes of base64 text by the host, or null (short, long or not base64). */
function nativeFromBase64(text) {
  return text.length < NATIVE_MIN || text.length > NATIVE_MAX ? null : hostBytes(3, text);
}
/** The UTF-8 text (lenient, BOM kept) of base64 text by the host in one call, or null. */
function nativeBase64Text(text) {
  return text.length < NATIVE_MIN || text.length > NATIVE_MAX ? null : hostBytes(5, text);
}

// ---- UTF-8 --------------------------------------------------------------------------------------------
/** The UTF-8 bytes of a string; a lone surrogate is U+FFFD (the USVString conversion). */
function utf8Encode(s) {
  if (s.length >= NATIVE_MIN && s.length <= NATIVE_MAX) {
    const native = hostBytes(2, apply(toWellFormed, s, []));
    if (native !== null) return native;
  }
  const n = s.length;
  let size = 0;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) size += 1;
    else if (c < 0x800) size += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < n && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) { size += 4; i++; }
    else size += 3;
  }
  const out = new U8(size);
  let j = 0;
  for (let i = 0; i < n; i++) {
    let c = s.charCodeAt(i);
    if (c < 0x80) { out[j++] = c; continue; }
    if (c < 0x800) { out[j++] = 0xc0 | (c >> 6); out[j++] = 0x80 | (c & 63); continue; }
    if (c >= 0xd800 && c <= 0xdfff) {
      const d = i + 1 < n ? s.charCodeAt(i + 1) : 0;
      if (c <= 0xdbff && (d & 0xfc00) === 0xdc00) {
        const cp = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        out[j++] = 0xf0 | (cp >> 18); out[j++] = 0x80 | ((cp >> 12) & 63);
        out[j++] = 0x80 | ((cp >> 6) & 63); out[j++] = 0x80 | (cp & 63);
        i++;
        continue;
      }
      c = 0xfffd;
    }
    out[j++] = 0xe0 | (c >> 12); out[j++] = 0x80 | ((c >> 6) & 63); out[j++] = 0x80 | (c & 63);
  }
  return out;
}

/** Collects UTF-16 code units and joins them in chunks (fromCharCode takes a bounded argument list). */
function Sink() { this.units = []; this.parts = []; }
Sink.prototype.push = function (u) {
  const units = this.units;
  units[units.length] = u;
  if (units.length === 8192) { this.parts[this.parts.length] = apply(fromCharCode, null, units); this.units = []; }
};
Sink.prototype.codePoint = function (cp) {
  if (cp < 0x10000) this.push(cp);
  else { cp -= 0x10000; this.push(0xd800 | (cp >> 10)); this.push(0xdc00 | (cp & 0x3ff)); }
};
Sink.prototype.text = function () {
  if (this.units.length > 0) this.parts[this.parts.length] = apply(fromCharCode, null, this.units);
  return this.parts.length === 1 ? this.parts[0] : this.parts.join('');
};

function decodeError(fatal, sink) {
  if (fatal) throw new TE('The encoded data was not valid for encoding utf-8');
  sink.push(0xfffd);
}
/** The WHATWG UTF-8 decoder over bytes[0..n), continuing from state st (need, seen, lower, upper, cp). */
function utf8Run(st, bytes, n, flush, fatal, sink) {
  let need = st.need, seen = st.seen, lower = st.lower, upper = st.upper, cp = st.cp;
  for (let i = 0; i < n; i++) {
    const b = bytes[i];
    if (need === 0) {
      if (b < 0x80) sink.push(b);
      else if (b >= 0xc2 && b <= 0xdf) { need = 1; cp = b & 0x1f; }
      else if (b >= 0xe0 && b <= 0xef) { if (b === 0xe0) lower = 0xa0; else if (b === 0xed) upper = 0x9f; need = 2; cp = b & 0xf; }
      else if (b >= 0xf0 && b <= 0xf4) { if (b === 0xf0) lower = 0x90; else if (b === 0xf4) upper = 0x8f; need = 3; cp = b & 7; }
      else decodeError(fatal, sink);
      continue;
    }
    if (b < lower || b > upper) {
      need = seen = cp = 0; lower = 0x80; upper = 0xbf;
      decodeError(fatal, sink);
      i--;
      continue;
    }
    lower = 0x80; upper = 0xbf;
    cp = (cp << 6) | (b & 0x3f);
    if (++seen === need) { sink.codePoint(cp); need = seen = cp = 0; }
  }
  if (flush && need !== 0) { need = seen = cp = 0; lower = 0x80; upper = 0xbf; decodeError(fatal, sink); }
  st.need = need; st.seen = seen; st.lower = lower; st.upper = upper; st.cp = cp;
}
function utf8State() { return { need: 0, seen: 0, lower: 0x80, upper: 0xbf, cp: 0 }; }
/** UTF-8 decode without BOM (or fail): replacement characters for invalid bytes. */
function utf8Decode(bytes) {
  const native = nativeDecode(bytes, false);
  if (native !== null) return native;
  const sink = new Sink();
  utf8Run(utf8State(), bytes, bytes.length, true, false, sink);
  return sink.text();
}

// ---- TextEncoder / TextDecoder ------------------------------------------------------------------------
function usv(v) { return Str(v).toWellFormed(); }
class TextEncoder {
  get encoding() { return 'utf-8'; }
  encode(input = '') { return utf8Encode(Str(input)); }
  encodeInto(source, destination) {
    if (viewName(destination) !== 'Uint8Array') throw new TE('TextEncoder.encodeInto: the destination must be a Uint8Array');
    const s = Str(source), n = s.length, cap = apply(taLength, destination, []);
    let read = 0, written = 0;
    for (let i = 0; i < n; i++) {
      let c = s.charCodeAt(i), units = 1;
      if (c >= 0xd800 && c <= 0xdfff) {
        const d = i + 1 < n ? s.charCodeAt(i + 1) : 0;
        if (c <= 0xdbff && (d & 0xfc00) === 0xdc00) { c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00); units = 2; }
        else c = 0xfffd;
      }
      const size = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
      if (written + size > cap) break;
      if (size === 1) destination[written] = c;
      else if (size === 2) { destination[written] = 0xc0 | (c >> 6); destination[written + 1] = 0x80 | (c & 63); }
      else if (size === 3) {
        destination[written] = 0xe0 | (c >> 12); destination[written + 1] = 0x80 | ((c >> 6) & 63);
        destination[written + 2] = 0x80 | (c & 63);
      } else {
        destination[written] = 0xf0 | (c >> 18); destination[written + 1] = 0x80 | ((c >> 12) & 63);
        destination[written + 2] = 0x80 | ((c >> 6) & 63); destination[written + 3] = 0x80 | (c & 63);
      }
      written += size;
      read += units;
      i += units - 1;
    }
    return { read, written };
  }
}
defineProperty(TextEncoder.prototype, Symbol.toStringTag, { value: 'TextEncoder', configurable: true });

const LABELS = { 'utf-8': 'unicode-1-1-utf-8 unicode11utf8 unicode20utf8 utf-8 utf8 x-unicode20utf8',
  'utf-16le': 'csunicode iso-10646-ucs-2 ucs-2 unicode unicodefeff utf-16 utf-16le', 'utf-16be': 'unicodefffe utf-16be',
  'windows-1252': 'ansi_x3.4-1968 ascii cp1252 cp819 csisolatin1 ibm819 iso-8859-1 iso-ir-100 iso8859-1 iso88591 iso_8859-1 iso_8859-1:1987 l1 latin1 us-ascii windows-1252 x-cp1252' };
const ENCODINGS = new M();
for (const name of keys(LABELS)) for (const label of LABELS[name].split(' ')) apply(mapSet, ENCODINGS, [label, name]);
const W1252 = [0x20ac, 0x81, 0x201a, 0x192, 0x201e, 0x2026, 0x2020, 0x2021, 0x2c6, 0x2030, 0x160, 0x2039, 0x152, 0x8d,
  0x17d, 0x8f, 0x90, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x2dc, 0x2122, 0x161, 0x203a, 0x153, 0x9d,
  0x17e, 0x178];

/** The bytes of a BufferSource (a view of the same memory). */
function bytesOf(input, what) {
  if (input === undefined) return new U8(0);
  if (isView(input)) {
    const name = viewName(input);
    if (name === undefined) return new U8(apply(dvBuffer, input, []), apply(dvOffset, input, []), apply(dvByteLength, input, []));
    return new U8(apply(taBuffer, input, []), apply(taOffset, input, []), apply(taByteLength, input, []));
  }
  if (brand(abByteLength, input)) return new U8(input);
  throw new TE(what + ': the input must be an ArrayBuffer or an ArrayBufferView');
}
function utf16Run(st, bytes, n, flush, fatal, big, sink) {
  for (let i = 0; i < n; i++) {
    if (st.lead < 0) { st.lead = bytes[i]; continue; }
    const unit = big ? (st.lead << 8) | bytes[i] : (bytes[i] << 8) | st.lead;
    st.lead = -1;
    if (st.surrogate >= 0) {
      const high = st.surrogate;
      st.surrogate = -1;
      if ((unit & 0xfc00) === 0xdc00) { sink.push(high); sink.push(unit); continue; }
      decodeError(fatal, sink);
    }
    if ((unit & 0xfc00) === 0xd800) st.surrogate = unit;
    else if ((unit & 0xfc00) === 0xdc00) decodeError(fatal, sink);
    else sink.push(unit);
  }
  if (flush && (st.lead >= 0 || st.surrogate >= 0)) { st.lead = st.surrogate = -1; decodeError(fatal, sink); }
}
class TextDecoder {
  #encoding; #fatal; #ignoreBOM; #state = null; #bomSeen = false; #streaming = false;
  constructor(label = 'utf-8', options = undefined) {
    const key = Str(label).trim().toLowerCase();
    const encoding = apply(mapGet, ENCODINGS, [key]);
    if (encoding === undefined) throw new RE('TextDecoder: the "' + Str(label) + '" encoding is not supported here (utf-8, utf-16le, utf-16be and windows-1252 are)');
    if (options !== undefined && options !== null && typeof options !== 'object' && typeof options !== 'function') throw new TE('TextDecoder: options must be an object');
    this.#encoding = encoding;
    this.#fatal = options == null ? false : !!options.fatal;
    this.#ignoreBOM = options == null ? false : !!options.ignoreBOM;
  }
  get encoding() { return this.#encoding; }
  get fatal() { return this.#fatal; }
  get ignoreBOM() { return this.#ignoreBOM; }
  decode(input = undefined, options = undefined) {
    const bytes = bytesOf(input, 'TextDecoder.decode');
    const stream = options == null ? false : !!options.stream;
    if (!this.#streaming) { this.#state = null; this.#bomSeen = false; }
    this.#streaming = stream;
    const enc = this.#encoding, sink = new Sink();
    // All of it at once, from a fresh state: the host's decoder (null: not valid, or small; the code below says).
    const native = enc === 'utf-8' && !stream && (this.#state === null || this.#state.need === 0) ? nativeDecode(bytes, this.#fatal) : null;
    if (native !== null) sink.parts[0] = native;
    else if (enc === 'utf-8') {
      const st = this.#state ?? (this.#state = utf8State());
      utf8Run(st, bytes, bytes.length, !stream, this.#fatal, sink);
    } else if (enc === 'windows-1252') {
      for (let i = 0; i < bytes.length; i++) { const b = bytes[i]; sink.push(b >= 0x80 && b < 0xa0 ? W1252[b - 0x80] : b); }
    } else {
      const st = this.#state ?? (this.#state = { lead: -1, surrogate: -1 });
      utf16Run(st, bytes, bytes.length, !stream, this.#fatal, enc === 'utf-16be', sink);
    }
    if (!stream) this.#state = null;
    let text = sink.text();
    if (enc !== 'windows-1252' && !this.#ignoreBOM && !this.#bomSeen && text.length > 0) {
      this.#bomSeen = true;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    return text;
  }
}
defineProperty(TextDecoder.prototype, Symbol.toStringTag, { value: 'TextDecoder', configurable: true });

// ---- structuredClone ----------------------------------------------------------------------------------
function cloneError(what) { return new DOMEx(what + ' could not be cloned.', 'DataCloneError'); }
function describe(v) {
  if (typeof v === 'function') return 'function ' + (v.name || 'anonymous');
  if (typeof v === 'symbol') return apply(symbolValueOf, v, []).toString();
  return '#<' + apply(objectToString, v, []).slice(8, -1) + '>';
}
const objectToString = O.prototype.toString;
const TAGGED = new M([['[object Date]', [dateGetTime, 'date']], ['[object RegExp]', [rxSource, 'regexp']],
  ['[object ArrayBuffer]', [abByteLength, 'buffer']], ['[object Map]', [mapSize, 'map']], ['[object Set]', [setSize, 'set']]]);
for (const box of boxes) apply(mapSet, TAGGED, ['[object ' + box[0].name + ']', [box[1], box[1]]]);
const hasOwn = O.hasOwn;
/** Assignment is much faster than defineProperty in QuickJS; only __proto__ would not make an own property. */
function setOwn(o, k, x) {
  if (k === '__proto__') defineProperty(o, k, { value: x, writable: true, enumerable: true, configurable: true });
  else o[k] = x;
}
function isIndex(k, n) { const i = +k; return Str(i) === k && i >= 0 && i < n && i === Math.floor(i); }
/**
 * What a value is for structuredClone. Most values are plain objects and arrays: told apart without a brand check
 * (each failing one throws). Others are asked their brand (the internal slot), not their prototype.
 */
function kindOf(v) {
  if (isArray(v)) return 'array';
  if (isView(v)) return 'view';
  // Without a built-in tag or a Symbol.toStringTag (which every other cloneable has), it is an ordinary object.
  const tag = apply(objectToString, v, []);
  if (tag === '[object Object]') return 'object';
  // The tag says which brand to check first (a failing check throws, which is slow); a tag can lie, the brand not.
  const guess = apply(mapGet, TAGGED, [tag]);
  if (guess !== undefined && brand(guess[0], v)) return guess[1];
  if (tag === '[object Error]' && v instanceof E) return 'error';
  for (const box of boxes) if (brand(box[1], v)) return box[1];
  if (brand(dateGetTime, v)) return 'date';
  if (v !== RX.prototype && brand(rxSource, v)) return 'regexp';
  if (brand(abByteLength, v)) return 'buffer';
  if (brand(mapSize, v)) return 'map';
  if (brand(setSize, v)) return 'set';
  if (v instanceof DOMEx) return 'domexception';
  if (v instanceof E) return 'error';
  if (brand(symbolValueOf, v) || v instanceof P || brand1(wmHas, v) || brand1(wsHas, v)) return 'uncloneable';
  return 'object';
}
function structuredClone(value, options = undefined) {
  if (arguments.length === 0) throw new TE('structuredClone: 1 argument required, but only 0 present.');
  // A WeakMap: a Map whose values are objects makes every GC cycle of QuickJS walk them (measured: 5x slower).
  const memory = new WM();
  const transferred = [];
  if (options != null && options.transfer !== undefined) {
    for (const t of options.transfer) {
      if (!brand(abByteLength, t)) throw cloneError('Value not transferable:');
      if (apply(wmGet, memory, [t]) !== undefined) throw new DOMEx('structuredClone: an ArrayBuffer is transferred twice', 'DataCloneError');
      if (detached(t)) throw new DOMEx('structuredClone: an ArrayBuffer to transfer is detached', 'DataCloneError');
      apply(wmSet, memory, [t, copyBuffer(t)]);
      transferred[transferred.length] = t;
    }
  }
  // Containers are created when first met and filled from a work list, so depth costs heap, not stack.
  const work = [];
  function copyBuffer(b) {
    if (detached(b)) throw new DOMEx('structuredClone: an ArrayBuffer is detached', 'DataCloneError');
    if (!apply(abResizable, b, [])) return apply(abSlice, b, [0]);
    const out = new AB(apply(abByteLength, b, []), { maxByteLength: apply(abMax, b, []) });
    new U8(out).set(new U8(b));
    return out;
  }
  function clone(v) {
    const t = typeof v;
    if (t === 'symbol' || t === 'function') throw cloneError(describe(v));
    if (v === null || (t !== 'object')) return v;
    const known = apply(wmGet, memory, [v]);
    if (known !== undefined) return known;
    let out;
    const kind = kindOf(v);
    if (kind === 'object') { out = {}; work.push(out, v, 'o'); }
    else if (kind === 'array') { out = []; work.push(out, v, 'a'); }
    else if (kind === 'view') {
      const name = viewName(v);
      if (name === undefined) out = new DV(clone(apply(dvBuffer, v, [])), apply(dvOffset, v, []), apply(dvByteLength, v, []));
      else out = new VIEWS[name](clone(apply(taBuffer, v, [])), apply(taOffset, v, []), apply(taLength, v, []));
    } else if (kind === 'map') { out = new M(); work.push(out, v, 'm'); }
    else if (kind === 'set') { out = new S(); work.push(out, v, 's'); }
    else if (kind === 'date') out = new D(apply(dateGetTime, v, []));
    else if (kind === 'regexp') out = new RX(apply(rxSource, v, []), apply(rxFlags, v, []));
    else if (kind === 'buffer') out = copyBuffer(v);
    else if (typeof kind === 'function') out = O(apply(kind, v, []));
    else if (kind === 'domexception') out = new DOMEx(Str(v.message), Str(v.name));
    else if (kind === 'error') {
      const name = Str(v.name);
      const C = O.hasOwn(ERRORS, name) ? ERRORS[name] : E;
      out = O.hasOwn(v, 'message') ? new C(Str(v.message)) : new C();
      if (typeof v.stack === 'string') defineProperty(out, 'stack', { value: v.stack, writable: true, configurable: true });
      if (O.hasOwn(v, 'cause')) work.push(out, v, 'c');
    } else throw cloneError(describe(v));
    apply(wmSet, memory, [v, out]);
    return out;
  }
  const root = clone(value);
  while (work.length > 0) {
    const kind = work.pop(), v = work.pop(), out = work.pop();
    if (kind === 'o') { const ks = keys(v); for (let i = 0; i < ks.length; i++) setOwn(out, ks[i], clone(v[ks[i]])); }
    else if (kind === 'a') {
      // Indexes by number (string keys would each be interned), holes kept; then any other own keys.
      const n = v.length;
      let count = 0;
      for (let i = 0; i < n; i++) if (i in v) { out[i] = clone(v[i]); count++; }
      out.length = n;
      if (keys(v).length > count) for (const k of keys(v)) if (!isIndex(k, n)) setOwn(out, k, clone(v[k]));
    }
    else if (kind === 'm') { const entries = []; for (const e of apply(mapEntries, v, [])) entries[entries.length] = e; for (const [k, x] of entries) apply(mapSet, out, [clone(k), clone(x)]); }
    else if (kind === 's') { const items = []; for (const x of apply(setValues, v, [])) items[items.length] = x; for (const x of items) apply(setAdd, out, [clone(x)]); }
    else defineProperty(out, 'cause', { value: clone(v.cause), writable: true, configurable: true });
  }
  if (abTransfer !== undefined) for (const t of transferred) apply(abTransfer, t, []);
  return root;
}

// ---- crypto -------------------------------------------------------------------------------------------
const fillRandom = lib.fillRandom;
const HEX = [];
for (let i = 0; i < 256; i++) HEX[i] = (i < 16 ? '0' : '') + i.toString(16);
const cryptoObject = {
  getRandomValues(array) {
    if (!isView(array)) throw new TE('crypto.getRandomValues: the argument must be an integer-type TypedArray');
    const name = viewName(array);
    if (name === undefined || INTEGER_VIEWS.indexOf(name) < 0) throw new DOMEx('The data argument must be an integer-type TypedArray', 'TypeMismatchError');
    const size = apply(taByteLength, array, []);
    if (size > 65536) throw new DOMEx("The ArrayBufferView's byte length (" + size + ') exceeds the number of bytes of entropy available via this API (65536)', 'QuotaExceededError');
    fillRandom(new U8(apply(taBuffer, array, []), apply(taOffset, array, []), size));
    return array;
  },
  randomUUID() {
    const b = new U8(16);
    fillRandom(b);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    return HEX[b[0]] + HEX[b[1]] + HEX[b[2]] + HEX[b[3]] + '-' + HEX[b[4]] + HEX[b[5]] + '-' + HEX[b[6]] + HEX[b[7]] + '-' +
      HEX[b[8]] + HEX[b[9]] + '-' + HEX[b[10]] + HEX[b[11]] + HEX[b[12]] + HEX[b[13]] + HEX[b[14]] + HEX[b[15]];
  },
};
defineProperty(cryptoObject, Symbol.toStringTag, { value: 'Crypto', configurable: true });

return {
  globals: { TextEncoder, TextDecoder, structuredClone, crypto: cryptoObject },
  lib: { utf8Encode, utf8Decode, usv, nativeBase64, nativeFromBase64, nativeBase64Text },
};
})`;
