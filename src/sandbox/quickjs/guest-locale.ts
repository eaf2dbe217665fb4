/**
 * English locale formatting and ordering for the guest, which QuickJS lacks (it has no Intl): without this,
 * (1234.5).toLocaleString() is "1234.5", a sort by localeCompare puts "C" before "a" and a date is "01/01/1970",
 * answers that differ from Node's and a browser's with nothing to say so. Number and date formats follow en-US
 * (ICU's), also behind Intl.NumberFormat, DateTimeFormat and Collator (only those); another locale, or an option
 * not covered, is a RangeError rather than a wrong string. A factory like
 * guest-web.ts, run before the intrinsics are frozen.
 */
export const GUEST_LOCALE_SOURCE = String.raw`(function (lib) {
'use strict';
const RE = RangeError, Str = String, apply = Reflect.apply, defineProperty = Object.defineProperty;
const numberValueOf = Number.prototype.valueOf, bigintToString = BigInt.prototype.toString;
const dateGetTime = Date.prototype.getTime;

function english(locales) {
  const tag = Array.isArray(locales) ? locales[0] : locales;
  if (tag === undefined || /^en(-|$)/i.test(Str(tag))) return;
  throw new RE('locale ' + Str(tag) + ' is not supported in the sandbox (English formats only)');
}
function only(options, allowed, what) {
  if (options === undefined) return {};
  for (const k of Object.keys(Object(options))) {
    if (allowed.indexOf(k) < 0 && options[k] !== undefined) throw new RE(what + ' option ' + k + ' is not supported in the sandbox');
  }
  return Object(options);
}
function digitsOption(v, fallback) {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!(n >= 0 && n <= 100) || Math.floor(n) !== n) throw new RE('fraction digits must be 0-100, got ' + Str(v));
  return n;
}

// ---- numbers -----------------------------------------------------------------------------------------------
// Digits of |x| as its shortest decimal form (what ICU rounds, so 1.005 to 2 places is 1.01), rounded half away
// from zero to 'max' places, trimmed to no fewer than 'min'.
function fixed(x, min, max) {
  let s = Str(Math.abs(x)), exp = 0;
  const e = s.indexOf('e');
  if (e >= 0) { exp = Number(s.slice(e + 1)); s = s.slice(0, e); }
  const dot = s.indexOf('.');
  let digits = dot < 0 ? s : s.slice(0, dot) + s.slice(dot + 1);
  let point = (dot < 0 ? s.length : dot) + exp;
  if (point < 0) { digits = '0'.repeat(-point) + digits; point = 0; }
  if (point > digits.length) digits += '0'.repeat(point - digits.length);
  let keep = point + max;
  if (digits.length > keep) {
    const up = digits.charCodeAt(keep) >= 53;
    digits = digits.slice(0, keep);
    if (up) {
      const d = digits.split('');
      let i = d.length - 1;
      while (i >= 0 && d[i] === '9') { d[i] = '0'; i--; }
      if (i < 0) { d.unshift('1'); point++; keep++; } else d[i] = Str.fromCharCode(d[i].charCodeAt(0) + 1);
      digits = d.join('');
    }
  }
  let int = digits.slice(0, point).replace(/^0+(?=.)/, '') || '0';
  let frac = digits.slice(point, keep);
  while (frac.length > min && frac[frac.length - 1] === '0') frac = frac.slice(0, -1);
  while (frac.length < min) frac += '0';
  return { int, frac };
}
function group(int) {
  let out = '';
  for (let i = int.length; i > 0; i -= 3) out = int.slice(Math.max(0, i - 3), i) + (out ? ',' + out : '');
  return out;
}
const SYMBOLS = { USD: '$', EUR: '€', GBP: '£', JPY: '¥', CNY: 'CN¥', INR: '₹', CAD: 'CA$', AUD: 'A$', KRW: '₩' };
const NO_CENTS = ['JPY', 'KRW'];
function formatNumber(x, locales, options) {
  english(locales);
  const o = only(options, ['style', 'currency', 'currencyDisplay', 'minimumFractionDigits', 'maximumFractionDigits', 'useGrouping', 'minimumIntegerDigits'], 'toLocaleString');
  const style = o.style === undefined ? 'decimal' : Str(o.style);
  if (style !== 'decimal' && style !== 'percent' && style !== 'currency') throw new RE('style ' + style + ' is not supported in the sandbox');
  let prefix = '', suffix = '', lo = 0, hi = 3;
  if (style === 'percent') { x = x * 100; suffix = '%'; hi = 0; }
  if (style === 'currency') {
    if (o.currency === undefined) throw new TypeError('Currency code is required with currency style.');
    const code = Str(o.currency).toUpperCase();
    if (o.currencyDisplay !== undefined && o.currencyDisplay !== 'symbol' && o.currencyDisplay !== 'code') throw new RE('currencyDisplay ' + Str(o.currencyDisplay) + ' is not supported in the sandbox');
    prefix = o.currencyDisplay === 'code' || !SYMBOLS[code] ? code + '\u00a0' : SYMBOLS[code];
    lo = hi = NO_CENTS.indexOf(code) >= 0 ? 0 : 2;
  }
  const min = digitsOption(o.minimumFractionDigits, lo);
  const max = Math.max(min, digitsOption(o.maximumFractionDigits, Math.max(min, hi)));
  if (x !== x) return 'NaN';
  const negative = x < 0 || (x === 0 && 1 / x < 0);
  let body;
  if (!isFinite(x)) body = '∞';
  else {
    const f = fixed(x, min, max);
    let int = f.int;
    const width = digitsOption(o.minimumIntegerDigits, 1);
    while (int.length < width) int = '0' + int;
    body = (o.useGrouping === false ? int : group(int)) + (f.frac ? '.' + f.frac : '');
  }
  return (negative ? '-' : '') + prefix + body + suffix;
}
defineProperty(Number.prototype, 'toLocaleString', { value: function toLocaleString(locales, options) {
  return formatNumber(apply(numberValueOf, this, []), locales, options);
}, writable: true, configurable: true });
defineProperty(BigInt.prototype, 'toLocaleString', { value: function toLocaleString(locales, options) {
  english(locales);
  only(options, ['useGrouping'], 'toLocaleString');
  const s = apply(bigintToString, this, []);
  const neg = s[0] === '-';
  return (neg ? '-' : '') + (options && options.useGrouping === false ? s.slice(neg ? 1 : 0) : group(s.slice(neg ? 1 : 0)));
}, writable: true, configurable: true });

// ---- strings -----------------------------------------------------------------------------------------------
// An approximation of ICU's root collation: letters compare by base letter first (spaces and punctuation before
// digits, digits before letters), then accents, then case (lower first); numeric: true compares digit runs as numbers.
function kind(c) { return /\p{L}/u.test(c) ? 3 : /\p{N}/u.test(c) ? 2 : 1; }
function base(c) { return c.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase(); }
function marks(c) { return c.normalize('NFD').replace(/\P{M}/gu, ''); }
function units(s, numeric) {
  const out = [];
  const re = numeric ? /\d+|[\s\S]/gu : /[\s\S]/gu;
  for (const m of s.match(re) || []) out.push(m);
  return out;
}
function cmp(a, b) { return a < b ? -1 : a > b ? 1 : 0; }
function collate(x, y, numeric, level) {
  const a = units(x, numeric), b = units(y, numeric);
  for (let l = 1; l <= level; l++) {
    for (let i = 0; i < a.length && i < b.length; i++) {
      const p = a[i], q = b[i];
      let r;
      if (l === 1) {
        const kp = kind(p), kq = kind(q);
        if (numeric && kp === 2 && kq === 2 && p.length + q.length > 2) r = cmp(BigInt(p), BigInt(q));
        else r = kp !== kq ? cmp(kp, kq) : cmp(base(p), base(q));
      } else if (l === 2) r = cmp(marks(p), marks(q));
      else r = (p !== q && p.toLowerCase() === p ? -1 : 0) || (p !== q && q.toLowerCase() === q ? 1 : 0) || cmp(p, q);
      if (r) return r;
    }
    if (a.length !== b.length) return a.length < b.length ? -1 : 1;
  }
  return 0;
}
defineProperty(String.prototype, 'localeCompare', { value: function localeCompare(that, locales, options) {
  if (this === null || this === undefined) throw new TypeError('String.prototype.localeCompare called on null or undefined');
  english(locales);
  const o = only(options, ['numeric', 'sensitivity', 'usage', 'ignorePunctuation'], 'localeCompare');
  const levels = { base: 1, accent: 2, case: 3, variant: 3 };
  const s = o.sensitivity === undefined ? 'variant' : Str(o.sensitivity);
  if (!levels[s]) throw new RE('sensitivity ' + s + ' is not supported');
  let x = Str(this), y = Str(that);
  if (o.ignorePunctuation) { x = x.replace(/[\s\p{P}]/gu, ''); y = y.replace(/[\s\p{P}]/gu, ''); }
  // case sensitivity: base letters and case, not accents.
  if (s === 'case') { x = x.normalize('NFD').replace(/\p{M}/gu, ''); y = y.normalize('NFD').replace(/\p{M}/gu, ''); }
  return collate(x, y, o.numeric === true, levels[s]);
}, writable: true, configurable: true });

// ---- dates (the sandbox's clock is UTC) ---------------------------------------------------------------------
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const DATE_OPTIONS = ['weekday', 'year', 'month', 'day', 'hour', 'minute', 'second', 'hour12', 'timeZone', 'dateStyle', 'timeStyle'];
const DATE_STYLES = {
  short: { month: 'numeric', day: 'numeric', year: '2-digit' },
  medium: { month: 'short', day: 'numeric', year: 'numeric' },
  long: { month: 'long', day: 'numeric', year: 'numeric' },
  full: { weekday: 'long', month: 'long', day: 'numeric', year: 'numeric' },
};
const TIME_STYLES = { short: { hour: 'numeric', minute: '2-digit' }, medium: { hour: 'numeric', minute: '2-digit', second: '2-digit' } };
function styled(o) {
  const ds = o.dateStyle === undefined ? undefined : DATE_STYLES[Str(o.dateStyle)];
  const ts = o.timeStyle === undefined ? undefined : TIME_STYLES[Str(o.timeStyle)];
  if ((o.dateStyle !== undefined && !ds) || (o.timeStyle !== undefined && !ts)) throw new RE('dateStyle ' + Str(o.dateStyle) + ' / timeStyle ' + Str(o.timeStyle) + ' is not supported in the sandbox');
  if (DATE_OPTIONS.slice(0, 7).some((k) => o[k] !== undefined)) throw new TypeError("Can't set option dateStyle or timeStyle with other date and time options");
  return Object.assign({ hour12: o.hour12, at: o.dateStyle === 'long' || o.dateStyle === 'full' }, ds, ts);
}
function two(n) { return n < 10 ? '0' + n : Str(n); }
function formatDate(t, locales, options, defaults) {
  english(locales);
  const o = only(options, DATE_OPTIONS, 'date');
  if (o.timeZone !== undefined && !/^(utc|gmt|etc\/utc)$/i.test(Str(o.timeZone))) throw new RE('time zone ' + Str(o.timeZone) + ' is not supported in the sandbox (UTC only)');
  if (t !== t) return 'Invalid Date';
  const d = new Date(t);
  const asked = DATE_OPTIONS.slice(0, 7).some((k) => o[k] !== undefined);
  const f = o.dateStyle !== undefined || o.timeStyle !== undefined ? styled(o) : asked ? o : defaults;
  const Y = d.getUTCFullYear(), M = d.getUTCMonth(), D = d.getUTCDate(), W = d.getUTCDay();
  const part = (v, style, name) => {
    if (style === 'numeric') return Str(v);
    if (style === '2-digit') return two(v % 100);
    throw new RE(name + ' ' + Str(style) + ' is not supported in the sandbox');
  };
  let date = '';
  const month = f.month === undefined ? undefined : Str(f.month);
  if (month === 'long' || month === 'short') {
    const name = month === 'long' ? MONTHS[M] : MONTHS[M].slice(0, 3);
    date = name + (f.day !== undefined ? ' ' + part(D, f.day, 'day') : '') + (f.year !== undefined ? (f.day !== undefined ? ', ' : ' ') + part(Y, f.year, 'year') : '');
  } else {
    const bits = [];
    if (month !== undefined) bits.push(part(M + 1, month, 'month'));
    if (f.day !== undefined) bits.push(part(D, f.day, 'day'));
    if (f.year !== undefined) bits.push(part(Y, f.year, 'year'));
    date = bits.join('/');
  }
  if (f.weekday !== undefined) {
    const w = Str(f.weekday) === 'long' ? DAYS[W] : Str(f.weekday) === 'short' ? DAYS[W].slice(0, 3) : null;
    if (w === null) throw new RE('weekday ' + Str(f.weekday) + ' is not supported in the sandbox');
    date = date ? w + ', ' + date : w;
  }
  let time = '';
  if (f.hour !== undefined || f.minute !== undefined || f.second !== undefined) {
    const h = d.getUTCHours(), h12 = f.hour12 !== false;
    const hh = f.hour === undefined ? '' : !h12 ? two(h) : f.hour === '2-digit' ? two(h % 12 || 12) : Str(h % 12 || 12);
    time = [hh, f.minute === undefined ? '' : two(d.getUTCMinutes()), f.second === undefined ? '' : two(d.getUTCSeconds())].filter((x) => x).join(':');
    if (h12 && f.hour !== undefined) time += ' ' + (h < 12 ? 'AM' : 'PM');
  }
  return date && time ? date + (f.at ? ' at ' : ', ') + time : date || time;
}
const DATE = { year: 'numeric', month: 'numeric', day: 'numeric' };
const TIME = { hour: 'numeric', minute: '2-digit', second: '2-digit' };
const BOTH = { year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: '2-digit', second: '2-digit' };
for (const [name, defaults] of [['toLocaleDateString', DATE], ['toLocaleTimeString', TIME], ['toLocaleString', BOTH]]) {
  defineProperty(Date.prototype, name, { value: { [name](locales, options) {
    return formatDate(apply(dateGetTime, this, []), locales, options, defaults);
  } }[name], writable: true, configurable: true });
}

// Node names the zone after the offset: "GMT+0000 (Coordinated Universal Time)".
for (const name of ['toString', 'toTimeString']) {
  const own = Date.prototype[name];
  defineProperty(Date.prototype, name, { value: { [name]() {
    const text = apply(own, this, []);
    return /GMT\+0000$/.test(text) ? text + ' (Coordinated Universal Time)' : text;
  } }[name], writable: true, configurable: true });
}

// ---- Intl: the same formats behind its constructors (NumberFormat, DateTimeFormat, Collator) ------------------
const RESOLVED = { locale: 'en-US', numberingSystem: 'latn' };
function timeOf(d) { return d === undefined ? Date.now() : typeof d === 'number' ? d : apply(dateGetTime, d, []); }
function NumberFormat(locales, options) {
  if (!new.target) return new NumberFormat(locales, options);
  formatNumber(0, locales, options); // refuses what it cannot do now, not at format()
  const o = options === undefined ? undefined : Object.assign({}, options);
  defineProperty(this, 'format', { value: (x) => formatNumber(Number(x), locales, o) });
}
NumberFormat.prototype.resolvedOptions = function resolvedOptions() { return Object.assign({ style: 'decimal' }, RESOLVED); };
function DateTimeFormat(locales, options) {
  if (!new.target) return new DateTimeFormat(locales, options);
  formatDate(0, locales, options, DATE);
  const o = options === undefined ? undefined : Object.assign({}, options);
  defineProperty(this, 'format', { value: (d) => formatDate(timeOf(d), locales, o, DATE) });
}
DateTimeFormat.prototype.resolvedOptions = function resolvedOptions() {
  return Object.assign({ calendar: 'gregory', timeZone: 'UTC' }, RESOLVED);
};
function Collator(locales, options) {
  if (!new.target) return new Collator(locales, options);
  const o = options === undefined ? undefined : Object.assign({}, options);
  Str.prototype.localeCompare.call('', '', locales, o);
  defineProperty(this, 'compare', { value: (a, b) => Str.prototype.localeCompare.call(Str(a), Str(b), locales, o) });
}
Collator.prototype.resolvedOptions = function resolvedOptions() { return Object.assign({ usage: 'sort', sensitivity: 'variant' }, RESOLVED); };
const Intl = {};
for (const [name, C] of [['NumberFormat', NumberFormat], ['DateTimeFormat', DateTimeFormat], ['Collator', Collator]]) {
  C.supportedLocalesOf = (locales) => (Array.isArray(locales) ? locales : locales === undefined ? [] : [locales]).filter((l) => /^en(-|$)/i.test(Str(l)));
  defineProperty(Intl, name, { value: C, writable: true, configurable: true });
}
// The rest of Intl says what it is rather than "not a function".
for (const name of ['ListFormat', 'PluralRules', 'RelativeTimeFormat', 'DisplayNames', 'Segmenter', 'Locale', 'DurationFormat']) {
  defineProperty(Intl, name, { value: { [name]: function () {
    throw new TypeError('Intl.' + name + ' is not available in the sandbox (only NumberFormat, DateTimeFormat and Collator)');
  } }[name], writable: true, configurable: true });
}
defineProperty(Intl, Symbol.toStringTag, { value: 'Intl', configurable: true });

return { globals: { Intl }, lib: {} };
})`;
