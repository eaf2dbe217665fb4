/**
 * `Intl` in the guest, and the locale-aware methods of the intrinsics routed through it (localeCompare,
 * toLocaleString and friends). QuickJS has no ICU: every answer comes from the host's (Node's Intl), synchronously,
 * through `lib.intl`, `lib.intlCall` and `lib.intlCompare` (host callbacks of the sandbox worker, intl-host.ts),
 * with 'en-US' and 'UTC' as the defaults.
 * The guest side converts arguments as ECMA-402 says (locale lists, options, numbers, dates: the clock it reads is
 * the guest's) so the host sees plain JSON; the host validates and throws V8's own RangeError/TypeError.
 *
 * An Intl object keeps its "spec" (kind, locale list, options as JSON): the host makes a formatter from it once and
 * gives its id, which later calls name (ids are dropped least recently used first; the spec is registered again).
 * A plain string like guest-runtime.ts.
 */
export const GUEST_INTL_SOURCE = String.raw`(function (lib) {
'use strict';
const O = Object, Str = String, TE = TypeError, RE = RangeError, SE = SyntaxError, E = Error, D = Date, BI = BigInt;
const { defineProperty, getPrototypeOf, getOwnPropertyDescriptor } = O;
const apply = Reflect.apply;
const stringify = JSON.stringify, parse = JSON.parse;
const arrayPush = Array.prototype.push, arrayJoin = Array.prototype.join;
const WM = WeakMap, wmGet = WM.prototype.get, wmSet = WM.prototype.set;
const S = Set, setAdd = S.prototype.add, setHas = S.prototype.has, setDelete = S.prototype.delete;
const dateNow = D.now, dateGetTime = D.prototype.getTime;
const numberValueOf = Number.prototype.valueOf, bigintValueOf = BI.prototype.valueOf;
const toUpper = Str.prototype.toUpperCase, toLower = Str.prototype.toLowerCase;
const isNaNFn = Number.isNaN;
const TA = getPrototypeOf(Uint8Array);
const taLength = getOwnPropertyDescriptor(TA.prototype, 'length').get;
const toPrimitiveKey = Symbol.toPrimitive, iteratorKey = Symbol.iterator, tagKey = Symbol.toStringTag;
const M = Map, mapGet = M.prototype.get, mapSet = M.prototype.set, mapDelete = M.prototype.delete;
const host = lib.intl, hostCall = lib.intlCall, hostCompare = lib.intlCompare;
const errorClasses = { RangeError: RE, TypeError: TE, SyntaxError: SE };
const STALE = 'S', STALE_COMPARE = -2;

// The host answers JSON, or 'E' and [name, message] for an error it threw.
function checked(answer) {
  if (answer[0] === 'E') {
    const e = parse(answer.slice(1));
    const C = O.hasOwn(errorClasses, e[0]) ? errorClasses[e[0]] : E;
    throw new C(e[1]);
  }
  return answer;
}
function ask(op, spec, a, b) { return checked(host(op, spec, a === undefined ? '' : a, b === undefined ? '' : b)); }
// Formatter ids by spec, for this execution. The host made (and validated) each; when it has dropped one it says
// STALE and the spec is registered again.
const ids = new M();
function idOf(spec) {
  let id = apply(mapGet, ids, [spec]);
  if (id === undefined) { id = +ask('id', spec); apply(mapSet, ids, [spec, id]); }
  return id;
}
function callSpec(spec, method, args) {
  let answer = hostCall(idOf(spec), method, args);
  if (answer === STALE) { apply(mapDelete, ids, [spec]); answer = hostCall(idOf(spec), method, args); }
  return parse(checked(answer));
}
function compareSpec(spec, a, b) {
  if (a === b) return 0;
  let r = hostCompare(idOf(spec), a, b);
  if (r === STALE_COMPARE) { apply(mapDelete, ids, [spec]); r = hostCompare(idOf(spec), a, b); }
  if (r !== r) throw new RE('Intl: the strings are too long to compare');
  return r;
}
function enc(v) {
  const t = typeof v;
  if (t === 'number') {
    if (v - v === 0) return v === 0 && 1 / v < 0 ? { $n: '-0' } : v;
    return { $n: isNaNFn(v) ? 'NaN' : v > 0 ? 'Infinity' : '-Infinity' };
  }
  if (t === 'bigint') return { $b: Str(v) };
  if (t === 'undefined') return { $u: 1 };
  if (t === 'symbol') throw new TE('Cannot convert a Symbol value to a string');
  return v;
}
function isObject(v) { return (typeof v === 'object' && v !== null) || typeof v === 'function'; }
// ToPrimitive (ECMA-262 7.1.1), keeping a BigInt or a string as it is.
function primitive(v, hint) {
  if (!isObject(v)) return v;
  const exotic = v[toPrimitiveKey];
  if (exotic !== undefined && exotic !== null) {
    if (typeof exotic !== 'function') throw new TE('Symbol.toPrimitive is not a function');
    const r = apply(exotic, v, [hint]);
    if (isObject(r)) throw new TE('Cannot convert object to primitive value');
    return r;
  }
  const order = hint === 'string' ? ['toString', 'valueOf'] : ['valueOf', 'toString'];
  for (let i = 0; i < 2; i++) {
    const f = v[order[i]];
    if (typeof f === 'function') { const r = apply(f, v, []); if (!isObject(r)) return r; }
  }
  throw new TE('Cannot convert object to primitive value');
}
// ToString: a symbol throws, an object goes through ToPrimitive (hint string).
function toStr(v) {
  if (typeof v === 'string') return v;
  const p = primitive(v, 'string');
  if (typeof p === 'symbol') throw new TE('Cannot convert a Symbol value to a string');
  return Str(p);
}
function toLength(v) { const n = +v; if (!(n > 0)) return 0; return n < 9007199254740991 ? n - (n % 1) : 9007199254740991; }

// Each Intl object's record ({ kind, spec, bound } or a Locale's { kind, info }).
const slots = new WM();

// CanonicalizeLocaleList up to the tags' validation, which is the host's.
function localeList(locales) {
  if (locales === undefined) return [];
  if (locales === null) throw new TE('Cannot convert undefined or null to object');
  if (typeof locales === 'string') return [locales];
  const locale = isObject(locales) ? apply(wmGet, slots, [locales]) : undefined;
  if (locale !== undefined && locale.kind === 'Locale') return [locale.info.tag];
  const o = O(locales);
  const n = toLength(o.length);
  const out = [];
  // The host refuses more than 1000 (intl-host.ts): stop reading there.
  for (let i = 0; i < n && out.length <= 1000; i++) {
    if (!(i in o)) continue;
    const el = o[i];
    if (typeof el !== 'string' && !isObject(el)) throw new TE('Language ID should be string or object.');
    apply(arrayPush, out, [typeof el === 'string' ? el : toStr(el)]);
  }
  return out;
}

// The options each kind reads, with how a value is converted: s string, n number, b boolean, x string or boolean.
const DIGITS = 'minimumIntegerDigits:n minimumFractionDigits:n maximumFractionDigits:n minimumSignificantDigits:n maximumSignificantDigits:n roundingIncrement:n roundingMode:s roundingPriority:s trailingZeroDisplay:s';
const OPTIONS = {
  NumberFormat: 'localeMatcher:s numberingSystem:s style:s currency:s currencyDisplay:s currencySign:s unit:s unitDisplay:s notation:s compactDisplay:s useGrouping:x signDisplay:s ' + DIGITS,
  DateTimeFormat: 'localeMatcher:s calendar:s numberingSystem:s hour12:b hourCycle:s timeZone:s weekday:s era:s year:s month:s day:s dayPeriod:s hour:s minute:s second:s fractionalSecondDigits:n timeZoneName:s formatMatcher:s dateStyle:s timeStyle:s',
  Collator: 'usage:s localeMatcher:s collation:s numeric:b caseFirst:s sensitivity:s ignorePunctuation:b',
  PluralRules: 'localeMatcher:s type:s ' + DIGITS,
  RelativeTimeFormat: 'localeMatcher:s numberingSystem:s style:s numeric:s',
  ListFormat: 'localeMatcher:s type:s style:s',
  DisplayNames: 'localeMatcher:s style:s type:s fallback:s languageDisplay:s',
  supportedLocalesOf: 'localeMatcher:s',
  Locale: 'calendar:s caseFirst:s collation:s hourCycle:s language:s numberingSystem:s numeric:b region:s script:s',
};
for (const k of O.keys(OPTIONS)) {
  const list = [];
  for (const item of OPTIONS[k].split(' ')) apply(arrayPush, list, [item.split(':')]);
  OPTIONS[k] = list;
}
function convertOption(v, type) {
  if (type === 'b') return !!v;
  if (type === 'n') return enc(+v);
  if (type === 'x' && !isObject(v)) return enc(v);
  return toStr(v);
}
// [] for undefined; [value] otherwise: the options read (an object), or a primitive for the host's V8 to judge.
function optionsSlot(kind, options) {
  if (options === undefined) return [];
  if (!isObject(options)) return [enc(options)];
  const out = {};
  const list = OPTIONS[kind];
  for (let i = 0; i < list.length; i++) {
    const name = list[i][0], v = options[name];
    if (v !== undefined) out[name] = convertOption(v, list[i][1]);
  }
  return [out];
}
function specOf(kind, locales, options) { return stringify([kind, localeList(locales), optionsSlot(kind, options)]); }

// Arguments, converted as each method does: d a date (undefined: the guest's now), r a range end, n a number,
// N a number or undefined, s a string, S a string or undefined, x a number to format (BigInt and decimal strings
// kept), X that or undefined, l a list of strings.
function argument(type, v) {
  if (type === 'd') return v === undefined ? dateNow() : +v;
  if (type === 'n') return +v;
  if (type === 's') return toStr(v);
  if (v === undefined && (type === 'r' || type === 'N' || type === 'S' || type === 'X')) return undefined;
  if (type === 'r' || type === 'N') return +v;
  if (type === 'S') return toStr(v);
  if (type === 'x' || type === 'X') {
    const p = primitive(v, 'number');
    return typeof p === 'bigint' || typeof p === 'string' ? p : +p;
  }
  // l: StringListFromIterable
  const out = [];
  if (v === undefined) return out;
  const it = v[iteratorKey];
  if (typeof it !== 'function') throw new TE((isObject(v) ? 'object' : Str(v)) + ' is not iterable');
  for (const s of v) {
    if (typeof s !== 'string') throw new TE('Iterable yielded ' + (isObject(s) ? '[object]' : Str(s)) + ' which is not a string');
    apply(arrayPush, out, [s]);
  }
  return out;
}

// As V8 names a receiver in its TypeError.
function receiver(self) {
  if (!isObject(self)) return typeof self === 'string' ? self : Str(self);
  let name = 'Object';
  try { const c = self.constructor; if (typeof c === 'function' && typeof c.name === 'string' && c.name !== '') name = c.name; } catch (_) {}
  return '#<' + name + '>';
}
function incompatible(method, self) { return new TE('Method ' + method + ' called on incompatible receiver ' + receiver(self)); }
function unwrap(self, kind, method, prefix) {
  const r = isObject(self) ? apply(wmGet, slots, [self]) : undefined;
  if (r === undefined || r.kind !== kind) throw incompatible((prefix === undefined ? '' : prefix) + 'Intl.' + kind + '.prototype.' + method, self);
  return r;
}
function callWith(record, method, types, args) {
  const sent = [];
  for (let i = 0; i < types.length; i++) {
    const a = argument(types[i], args[i]);
    apply(arrayPush, sent, [types[i] === 'l' ? a : enc(a)]);
  }
  return callSpec(record.spec, method, stringify(sent));
}
function method(o, name, fn, length) {
  defineProperty(fn, 'name', { value: name, configurable: true });
  defineProperty(fn, 'length', { value: length, configurable: true });
  defineProperty(o, name, { value: fn, writable: true, enumerable: false, configurable: true });
}

// Each kind: its methods (name -> argument types), the one given as a bound getter, and whether it may be called
// without new (the three of ECMA-402's first edition).
const KINDS = {
  NumberFormat: { methods: { formatToParts: 'x', formatRange: 'XX', formatRangeToParts: 'XX' }, bound: ['format', 'x'], callable: true },
  DateTimeFormat: { methods: { formatToParts: 'd', formatRange: 'rr', formatRangeToParts: 'rr' }, bound: ['format', 'd'], callable: true },
  Collator: { methods: {}, bound: ['compare', 'ss'], callable: true },
  PluralRules: { methods: { select: 'n', selectRange: 'NN' }, bound: null, callable: false },
  RelativeTimeFormat: { methods: { format: 'ns', formatToParts: 'ns' }, bound: null, callable: false },
  ListFormat: { methods: { format: 'l', formatToParts: 'l' }, bound: null, callable: false },
  DisplayNames: { methods: { of: 'S' }, bound: null, callable: false },
};
const Intl = {};
for (const kind of O.keys(KINDS)) {
  const k = KINDS[kind];
  const C = function () {
    if (new.target === undefined) {
      if (!k.callable) throw new TE('Constructor Intl.' + kind + " requires 'new'");
      return new C(arguments[0], arguments[1]);
    }
    const spec = specOf(kind, arguments[0], arguments[1]);
    idOf(spec);
    apply(wmSet, slots, [this, { kind, spec, bound: undefined }]);
  };
  defineProperty(C, 'name', { value: kind, configurable: true });
  defineProperty(C, 'length', { value: 0, configurable: true });
  const proto = C.prototype;
  defineProperty(proto, tagKey, { value: 'Intl.' + kind, configurable: true });
  method(proto, 'resolvedOptions', function () { return callSpec(unwrap(this, kind, 'resolvedOptions').spec, 'resolvedOptions', '[]'); }, 0);
  for (const name of O.keys(k.methods)) {
    const types = k.methods[name];
    method(proto, name, function () { return callWith(unwrap(this, kind, name), name, types, arguments); }, types.length);
  }
  if (k.bound !== null) {
    const name = k.bound[0], types = k.bound[1];
    const get = function () {
      const r = unwrap(this, kind, name, 'get ');
      if (r.bound === undefined) {
        r.bound = types === 'ss'
          ? function (x, y) { return compareSpec(r.spec, argument('s', x), argument('s', y)); }
          : function (x) { return callWith(r, name, types, [x]); };
        defineProperty(r.bound, 'name', { value: '' });
      }
      return r.bound;
    };
    defineProperty(get, 'name', { value: 'get ' + name });
    defineProperty(proto, name, { get, enumerable: false, configurable: true });
  }
  method(C, 'supportedLocalesOf', function (locales, options) {
    return parse(ask('static', stringify(['supportedLocalesOf', kind, localeList(locales), optionsSlot('supportedLocalesOf', options)])));
  }, 1);
  defineProperty(Intl, kind, { value: C, writable: true, enumerable: false, configurable: true });
}
// Intl.Locale is a value: the host answers everything it says when it is made.
const LOCALE_FIELDS = ['language', 'script', 'region', 'baseName', 'calendar', 'caseFirst', 'collation', 'hourCycle', 'numeric', 'numberingSystem', 'calendars', 'collations', 'hourCycles', 'numberingSystems', 'textInfo', 'timeZones', 'weekInfo'];
const Locale = function (tag, options) {
  if (new.target === undefined) throw new TE("Constructor Intl.Locale requires 'new'");
  const known = isObject(tag) ? apply(wmGet, slots, [tag]) : undefined;
  const t = known !== undefined && known.kind === 'Locale' ? known.info.tag : isObject(tag) ? toStr(tag) : enc(tag);
  const info = parse(ask('locale', stringify([t, optionsSlot('Locale', options)])));
  apply(wmSet, slots, [this, { kind: 'Locale', info }]);
};
defineProperty(Locale, 'name', { value: 'Locale', configurable: true });
defineProperty(Locale, 'length', { value: 1, configurable: true });
defineProperty(Locale.prototype, tagKey, { value: 'Intl.Locale', configurable: true });
method(Locale.prototype, 'toString', function () { return unwrap(this, 'Locale', 'toString').info.tag; }, 0);
method(Locale.prototype, 'maximize', function () { return new Locale(unwrap(this, 'Locale', 'maximize').info.maximized); }, 0);
method(Locale.prototype, 'minimize', function () { return new Locale(unwrap(this, 'Locale', 'minimize').info.minimized); }, 0);
for (const field of LOCALE_FIELDS) {
  const get = function () {
    const v = unwrap(this, 'Locale', field, 'get ').info[field];
    return isObject(v) ? parse(stringify(v)) : v;
  };
  defineProperty(get, 'name', { value: 'get ' + field });
  defineProperty(Locale.prototype, field, { get, enumerable: false, configurable: true });
}
defineProperty(Intl, 'Locale', { value: Locale, writable: true, enumerable: false, configurable: true });
method(Intl, 'getCanonicalLocales', function (locales) { return parse(ask('static', stringify(['getCanonicalLocales', localeList(locales)]))); }, 1);
method(Intl, 'supportedValuesOf', function (key) { return parse(ask('static', stringify(['supportedValuesOf', argument('s', key)]))); }, 1);
defineProperty(Intl, tagKey, { value: 'Intl', configurable: true });

// ---- the intrinsics' locale-aware methods ---------------------------------------------------------------
const DEFAULT_COLLATOR = stringify(['Collator', [], []]);
function thisString(self, name) {
  if (self === undefined || self === null) throw new TE('String.prototype.' + name + ' called on null or undefined');
  return toStr(self);
}
method(Str.prototype, 'localeCompare', function (that) {
  const s = thisString(this, 'localeCompare'), t = toStr(that);
  const locales = arguments[1], options = arguments[2];
  const spec = locales === undefined && options === undefined ? DEFAULT_COLLATOR : specOf('Collator', locales, options);
  return compareSpec(spec, s, t);
}, 1);
for (const [name, native] of [['toLocaleUpperCase', toUpper], ['toLocaleLowerCase', toLower]]) {
  method(Str.prototype, name, function (locales) {
    const s = thisString(this, name);
    const list = localeList(locales);
    // The default locale (en-US) maps case as the root locale does.
    return list.length === 0 ? apply(native, s, []) : parse(ask('case', stringify(list), name, s));
  }, 0);
}
function thisValue(valueOf, self, type) {
  try { return apply(valueOf, self, []); } catch (_) { throw new TE(type + ".prototype.toLocaleString requires that 'this' be a " + type); }
}
function numberToLocale(value) {
  return function () { const x = value(this); return callSpec(specOf('NumberFormat', arguments[0], arguments[1]), 'format', stringify([enc(x)])); };
}
method(Number.prototype, 'toLocaleString', numberToLocale((self) => thisValue(numberValueOf, self, 'Number')), 0);
method(BI.prototype, 'toLocaleString', numberToLocale((self) => thisValue(bigintValueOf, self, 'BigInt')), 0);
for (const name of ['toLocaleString', 'toLocaleDateString', 'toLocaleTimeString']) {
  method(D.prototype, name, function () {
    let t;
    try { t = apply(dateGetTime, this, []); } catch (_) { throw incompatible('Date.prototype.' + name, this); }
    if (isNaNFn(t)) return 'Invalid Date';
    // The formatter of ToDateTimeOptions' answer for this method (intl-host.ts).
    const spec = stringify(['DateTimeFormat', localeList(arguments[0]), optionsSlot('DateTimeFormat', arguments[1]), name]);
    return callSpec(spec, 'format', '[' + stringify(t) + ']');
  }, 0);
}
// Array.prototype.toLocaleString passes locales and options on (ECMA-402); an array met again inside itself is ''.
const joining = new S();
function listToLocale(length) {
  return function () {
    if (this === undefined || this === null) throw new TE('Array.prototype.toLocaleString called on null or undefined');
    const a = O(this);
    if (apply(setHas, joining, [a])) return '';
    const n = length(a);
    apply(setAdd, joining, [a]);
    try {
      const parts = [];
      for (let i = 0; i < n; i++) {
        const e = a[i];
        apply(arrayPush, parts, [e === undefined || e === null ? '' : toStr(e.toLocaleString(arguments[0], arguments[1]))]);
      }
      return apply(arrayJoin, parts, [',']);
    } finally { apply(setDelete, joining, [a]); }
  };
}
method(Array.prototype, 'toLocaleString', listToLocale((a) => toLength(a.length)), 0);
method(TA.prototype, 'toLocaleString', listToLocale((a) => apply(taLength, a, [])), 0);

return { globals: { Intl }, lib: {} };
})`;
