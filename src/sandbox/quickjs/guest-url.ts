/**
 * The guest's URL and URLSearchParams: the WHATWG URL Standard's parser state machine, serializer, setters and
 * application/x-www-form-urlencoded, in plain JavaScript. A string like guest-runtime.ts, evaluated once into the
 * template VM (ADR 0005), so a cold start does not compile it. Its factory takes the `lib` of guest-web.ts (the
 * UTF-8 codec) and returns `{ globals, lib }`.
 *
 * Where it is not the standard: domain to ASCII approximates UTS #46 (NFKC, lower case, the label separators,
 * Punycode; no mapping table, no Bidi or joiner rules), and blob: URLs have no origin of their own. The rest
 * follows the standard as Node 20's URL (Ada 2.9) implements it; test/quickjs-web-apis.test.ts compares the two.
 */
export const GUEST_URL_SOURCE = String.raw`(function (lib) {
'use strict';
const O = Object, Str = String, TE = TypeError, Num = Number, Arr = Array;
const { defineProperty, keys, getOwnPropertyDescriptor } = O;
const apply = Reflect.apply, ownKeys = Reflect.ownKeys;
const fromCodePoint = Str.fromCodePoint;
const iteratorSymbol = Symbol.iterator;
const { utf8Encode, utf8Decode, usv } = lib;
const FAIL = {};

// ---- code points and percent-encoding -----------------------------------------------------------------
const EOF = -1;
function codePoints(s) { const out = []; for (const ch of s) out[out.length] = ch.codePointAt(0); return out; }
const isDigit = (c) => c >= 0x30 && c <= 0x39;
const isAlpha = (c) => (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
const isHex = (c) => isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
const lowerAscii = (c) => (c >= 0x41 && c <= 0x5a ? c + 32 : c);
const HEXU = '0123456789ABCDEF';
function hexValue(c) { return c <= 0x39 ? c - 0x30 : (c | 32) - 0x57; }

const c0Set = (c) => c < 0x20 || c > 0x7e;
const fragmentSet = (c) => c0Set(c) || c === 0x20 || c === 0x22 || c === 0x3c || c === 0x3e || c === 0x60;
const querySet = (c) => c0Set(c) || c === 0x20 || c === 0x22 || c === 0x23 || c === 0x3c || c === 0x3e;
const specialQuerySet = (c) => querySet(c) || c === 0x27;
const pathSet = (c) => querySet(c) || c === 0x3f || c === 0x60 || c === 0x7b || c === 0x7d;
const userinfoSet = (c) => pathSet(c) || c === 0x2f || c === 0x3a || c === 0x3b || c === 0x3d || c === 0x40 || (c >= 0x5b && c <= 0x5e) || c === 0x7c;
const componentSet = (c) => userinfoSet(c) || (c >= 0x24 && c <= 0x26) || c === 0x2b || c === 0x2c;
const formSet = (c) => componentSet(c) || c === 0x21 || (c >= 0x27 && c <= 0x29) || c === 0x7e;

function encodeByte(b) { return '%' + HEXU[b >> 4] + HEXU[b & 15]; }
/** UTF-8 percent-encodes code point c with the given set. */
function pct(c, set) {
  if (!set(c)) return fromCodePoint(c);
  if (c < 0x80) return encodeByte(c);
  const bytes = utf8Encode(fromCodePoint(c));
  let out = '';
  for (let i = 0; i < bytes.length; i++) out += encodeByte(bytes[i]);
  return out;
}
function pctString(s, set, spaceAsPlus) {
  let out = '';
  const bytes = utf8Encode(s);
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (spaceAsPlus && b === 0x20) out += '+';
    else if (b < 0x80 && !set(b)) out += Str.fromCharCode(b);
    else out += encodeByte(b);
  }
  return out;
}
/** Percent-decodes a string into bytes (its UTF-8, with %XX replaced by the byte). */
function pctDecode(s) {
  const bytes = utf8Encode(s);
  const out = new Uint8Array(bytes.length);
  let j = 0;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (b === 0x25 && i + 2 < bytes.length && isHex(bytes[i + 1]) && isHex(bytes[i + 2])) {
      out[j++] = hexValue(bytes[i + 1]) * 16 + hexValue(bytes[i + 2]);
      i += 2;
    } else out[j++] = b;
  }
  return out.subarray(0, j);
}

// ---- schemes ------------------------------------------------------------------------------------------
const SPECIAL = { ftp: 21, file: null, http: 80, https: 443, ws: 80, wss: 443 };
const isSpecialScheme = (s) => O.hasOwn(SPECIAL, s);
const defaultPort = (s) => (O.hasOwn(SPECIAL, s) ? SPECIAL[s] : null);
const special = (url) => isSpecialScheme(url.scheme);
const opaque = (url) => typeof url.path === 'string';
const credentials = (url) => url.username !== '' || url.password !== '';
const cannotHaveCredentials = (url) => url.host === null || url.host === '' || url.scheme === 'file';

function isWindowsDriveLetter(cps, i, normalizedOnly) {
  return isAlpha(cps[i]) && (cps[i + 1] === 0x3a || (!normalizedOnly && cps[i + 1] === 0x7c));
}
function startsWithDriveLetter(cps, p) {
  return cps.length - p >= 2 && isWindowsDriveLetter(cps, p, false) &&
    (cps.length - p === 2 || [0x2f, 0x5c, 0x3f, 0x23].indexOf(cps[p + 2]) >= 0);
}
function isDriveString(s, normalizedOnly) { return s.length === 2 && isWindowsDriveLetter([s.charCodeAt(0), s.charCodeAt(1)], 0, normalizedOnly); }
function shorten(url) {
  const path = url.path;
  if (url.scheme === 'file' && path.length === 1 && isDriveString(path[0], true)) return;
  path.pop();
}
function singleDot(s) { return s === '.' || s.toLowerCase() === '%2e'; }
function doubleDot(s) { const l = s.toLowerCase(); return l === '..' || l === '.%2e' || l === '%2e.' || l === '%2e%2e'; }

// ---- hosts --------------------------------------------------------------------------------------------
function parseIPv4Number(s) {
  if (s === '') return FAIL;
  let radix = 10;
  if (s.length >= 2 && (s.startsWith('0x') || s.startsWith('0X'))) { s = s.slice(2); radix = 16; }
  else if (s.length >= 2 && s[0] === '0') { s = s.slice(1); radix = 8; }
  if (s === '') return 0;
  const valid = radix === 10 ? /^[0-9]+$/ : radix === 16 ? /^[0-9a-fA-F]+$/ : /^[0-7]+$/;
  if (!valid.test(s)) return FAIL;
  return parseInt(s, radix);
}
function endsInNumber(s) {
  const parts = s.split('.');
  if (parts[parts.length - 1] === '') { if (parts.length === 1) return false; parts.pop(); }
  const last = parts[parts.length - 1];
  if (last !== '' && /^[0-9]+$/.test(last)) return true;
  return parseIPv4Number(last) !== FAIL;
}
function parseIPv4(s) {
  const parts = s.split('.');
  if (parts[parts.length - 1] === '' && parts.length > 1) parts.pop();
  if (parts.length > 4) return FAIL;
  const numbers = [];
  for (const part of parts) { const n = parseIPv4Number(part); if (n === FAIL) return FAIL; numbers[numbers.length] = n; }
  for (let i = 0; i < numbers.length - 1; i++) if (numbers[i] > 255) return FAIL;
  const last = numbers[numbers.length - 1];
  if (last >= 256 ** (5 - numbers.length)) return FAIL;
  let ipv4 = last;
  for (let i = 0; i < numbers.length - 1; i++) ipv4 += numbers[i] * 256 ** (3 - i);
  const out = [];
  for (let i = 0; i < 4; i++) { out[3 - i] = Str(ipv4 % 256); ipv4 = Math.floor(ipv4 / 256); }
  return out.join('.');
}
function parseIPv6(cps) {
  const address = [0, 0, 0, 0, 0, 0, 0, 0];
  let pieceIndex = 0, compress = null, p = 0;
  const at = (i) => (i < cps.length ? cps[i] : EOF);
  if (at(p) === 0x3a) {
    if (at(p + 1) !== 0x3a) return FAIL;
    p += 2;
    compress = ++pieceIndex;
  }
  while (at(p) !== EOF) {
    if (pieceIndex === 8) return FAIL;
    if (at(p) === 0x3a) {
      if (compress !== null) return FAIL;
      p++;
      compress = ++pieceIndex;
      continue;
    }
    let value = 0, length = 0;
    while (length < 4 && isHex(at(p))) { value = value * 16 + hexValue(at(p)); p++; length++; }
    if (at(p) === 0x2e) {
      if (length === 0) return FAIL;
      p -= length;
      if (pieceIndex > 6) return FAIL;
      let numbersSeen = 0;
      while (at(p) !== EOF) {
        let piece = null;
        if (numbersSeen > 0) {
          if (at(p) === 0x2e && numbersSeen < 4) p++;
          else return FAIL;
        }
        if (!isDigit(at(p))) return FAIL;
        while (isDigit(at(p))) {
          const n = at(p) - 0x30;
          if (piece === null) piece = n;
          else if (piece === 0) return FAIL;
          else piece = piece * 10 + n;
          if (piece > 255) return FAIL;
          p++;
        }
        address[pieceIndex] = address[pieceIndex] * 0x100 + piece;
        numbersSeen++;
        if (numbersSeen === 2 || numbersSeen === 4) pieceIndex++;
      }
      if (numbersSeen !== 4) return FAIL;
      break;
    } else if (at(p) === 0x3a) {
      p++;
      if (at(p) === EOF) return FAIL;
    } else if (at(p) !== EOF) return FAIL;
    address[pieceIndex++] = value;
  }
  if (compress !== null) {
    let swaps = pieceIndex - compress;
    pieceIndex = 7;
    while (pieceIndex !== 0 && swaps > 0) {
      const t = address[pieceIndex];
      address[pieceIndex] = address[compress + swaps - 1];
      address[compress + swaps - 1] = t;
      pieceIndex--;
      swaps--;
    }
  } else if (pieceIndex !== 8) return FAIL;
  // Serialize: the first longest run of two or more zero pieces becomes "::".
  let best = -1, bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (address[i] !== 0) { i++; continue; }
    let j = i;
    while (j < 8 && address[j] === 0) j++;
    if (j - i > bestLen) { best = i; bestLen = j - i; }
    i = j;
  }
  let out = '[';
  for (let i = 0; i < 8; i++) {
    if (i === best) { out += i === 0 ? '::' : ':'; i += bestLen - 1; continue; }
    out += address[i].toString(16);
    if (i < 7) out += ':';
  }
  return out + ']';
}

// Punycode (RFC 3492) for domain to ASCII.
const BASE = 36, TMIN = 1, TMAX = 26, SKEW = 38, DAMP = 700;
function adapt(delta, numPoints, first) {
  delta = first ? Math.floor(delta / DAMP) : delta >> 1;
  delta += Math.floor(delta / numPoints);
  let k = 0;
  while (delta > ((BASE - TMIN) * TMAX) >> 1) { delta = Math.floor(delta / (BASE - TMIN)); k += BASE; }
  return k + Math.floor(((BASE - TMIN + 1) * delta) / (delta + SKEW));
}
const digitChar = (d) => Str.fromCharCode(d < 26 ? d + 97 : d + 22);
function punyEncode(label) {
  const input = codePoints(label);
  let out = '';
  for (const c of input) if (c < 0x80) out += Str.fromCharCode(c);
  const basic = out.length;
  let handled = basic;
  if (basic > 0) out += '-';
  let n = 128, delta = 0, bias = 72;
  while (handled < input.length) {
    let m = 0x7fffffff;
    for (const c of input) if (c >= n && c < m) m = c;
    delta += (m - n) * (handled + 1);
    n = m;
    for (const c of input) {
      if (c < n) delta++;
      if (c === n) {
        let q = delta;
        for (let k = BASE; ; k += BASE) {
          const t = k <= bias ? TMIN : k >= bias + TMAX ? TMAX : k - bias;
          if (q < t) break;
          out += digitChar(t + ((q - t) % (BASE - t)));
          q = Math.floor((q - t) / (BASE - t));
        }
        out += digitChar(q);
        bias = adapt(delta, handled + 1, handled === basic);
        delta = 0;
        handled++;
      }
    }
    delta++;
    n++;
  }
  return out;
}
function punyDecode(s) {
  const out = [];
  const cut = s.lastIndexOf('-');
  for (let i = 0; i < (cut < 0 ? 0 : cut); i++) { const c = s.charCodeAt(i); if (c >= 0x80) return FAIL; out[out.length] = c; }
  let n = 128, bias = 72, i = 0;
  for (let p = cut < 0 ? 0 : cut + 1; p < s.length; ) {
    const old = i;
    let w = 1;
    for (let k = BASE; ; k += BASE) {
      if (p >= s.length) return FAIL;
      const c = s.charCodeAt(p++);
      const d = c >= 0x30 && c <= 0x39 ? c - 22 : c >= 0x41 && c <= 0x5a ? c - 0x41 : c >= 0x61 && c <= 0x7a ? c - 0x61 : BASE;
      if (d >= BASE) return FAIL;
      i += d * w;
      const t = k <= bias ? TMIN : k >= bias + TMAX ? TMAX : k - bias;
      if (d < t) break;
      w *= BASE - t;
      if (w > 0x7fffffff) return FAIL;
    }
    bias = adapt(i - old, out.length + 1, old === 0);
    n += Math.floor(i / (out.length + 1));
    i %= out.length + 1;
    if (n > 0x10ffff) return FAIL;
    out.splice(i++, 0, n);
  }
  return fromCodePoint(...out);
}
/** Code points UTS #46 maps to nothing. */
const IGNORED = /[\u00ad\u034f\u180b-\u180d\u200b\u2060\ufe00-\ufe0f\ufeff]/g;
/** What UTS #46 disallows, approximately: controls, surrogates, private use, unassigned, U+FFFD. */
const DISALLOWED = /[\p{Cc}\p{Cs}\p{Co}\p{Cn}\ufffd]/u;
function domainToASCII(domain) {
  const asciiOnly = !/[^\x00-\x7f]/.test(domain);
  if (asciiOnly && !/(^|\.)xn--/i.test(domain)) return domain.toLowerCase();
  const mapped = domain.replace(IGNORED, '').normalize('NFKC').toLowerCase().normalize('NFC').replace(/[\u3002\uff0e\uff61]/g, '.');
  const labels = mapped.split('.');
  for (let i = 0; i < labels.length; i++) {
    const label = labels[i];
    if (label.startsWith('xn--')) {
      // A Punycode label must decode to a label that mapping leaves as it is.
      const decoded = punyDecode(label.slice(4));
      if (decoded === FAIL || decoded === '' || DISALLOWED.test(decoded)) return FAIL;
      if (decoded !== decoded.replace(IGNORED, '').normalize('NFKC').toLowerCase().normalize('NFC')) return FAIL;
    } else if (/[^\x00-\x7f]/.test(label)) {
      if (DISALLOWED.test(label)) return FAIL;
      labels[i] = 'xn--' + punyEncode(label);
    }
  }
  const out = labels.join('.');
  return out === '' ? FAIL : out;
}
const FORBIDDEN_HOST = /[\x00\t\n\r #/:<>?@[\\\]^|]/;
const FORBIDDEN_DOMAIN = /[\x00-\x20#%/:<>?@[\\\]^|\x7f]/;
function parseHost(input, isOpaque) {
  if (input.startsWith('[')) {
    if (!input.endsWith(']')) return FAIL;
    return parseIPv6(codePoints(input.slice(1, -1)));
  }
  if (isOpaque) {
    if (FORBIDDEN_HOST.test(input)) return FAIL;
    let out = '';
    for (const c of codePoints(input)) out += pct(c, c0Set);
    return out;
  }
  const domain = utf8Decode(pctDecode(input));
  const ascii = domainToASCII(domain);
  if (ascii === FAIL || FORBIDDEN_DOMAIN.test(ascii)) return FAIL;
  return endsInNumber(ascii) ? parseIPv4(ascii) : ascii;
}

// ---- the basic URL parser -----------------------------------------------------------------------------
const SCHEME_START = 1, SCHEME = 2, NO_SCHEME = 3, SPECIAL_RELATIVE_OR_AUTHORITY = 4, PATH_OR_AUTHORITY = 5,
  RELATIVE = 6, RELATIVE_SLASH = 7, SPECIAL_AUTHORITY_SLASHES = 8, SPECIAL_AUTHORITY_IGNORE_SLASHES = 9,
  AUTHORITY = 10, HOST = 11, HOSTNAME = 12, PORT = 13, FILE = 14, FILE_SLASH = 15, FILE_HOST = 16, PATH_START = 17,
  PATH = 18, OPAQUE_PATH = 19, QUERY = 20, FRAGMENT = 21;
function newRecord() {
  return { scheme: '', username: '', password: '', host: null, port: null, path: [], query: null, fragment: null };
}
/** Returns the record, FAIL, or (with a state override) undefined when it stopped early. */
function basicParse(input, base, url, override) {
  if (!url) {
    url = newRecord();
    input = input.replace(/^[\x00-\x20]+|[\x00-\x20]+$/g, '');
  }
  input = input.replace(/[\t\n\r]/g, '');
  const cps = codePoints(input);
  const len = cps.length;
  let state = override || SCHEME_START;
  let buffer = '', atSignSeen = false, insideBrackets = false, passwordTokenSeen = false;
  for (let p = 0; ; p++) {
    const c = p < len ? cps[p] : EOF;
    switch (state) {
      case SCHEME_START:
        if (isAlpha(c)) { buffer += Str.fromCharCode(lowerAscii(c)); state = SCHEME; }
        else if (!override) { state = NO_SCHEME; p--; }
        else return FAIL;
        break;
      case SCHEME:
        if (isAlpha(c) || isDigit(c) || c === 0x2b || c === 0x2d || c === 0x2e) buffer += Str.fromCharCode(lowerAscii(c));
        else if (c === 0x3a) {
          if (override) {
            if (isSpecialScheme(url.scheme) !== isSpecialScheme(buffer)) return undefined;
            if ((credentials(url) || url.port !== null) && buffer === 'file') return undefined;
            if (url.scheme === 'file' && url.host === '') return undefined;
          }
          url.scheme = buffer;
          if (override) {
            if (url.port === defaultPort(url.scheme)) url.port = null;
            return undefined;
          }
          buffer = '';
          if (url.scheme === 'file') state = FILE;
          else if (special(url) && base && base.scheme === url.scheme) state = SPECIAL_RELATIVE_OR_AUTHORITY;
          else if (special(url)) state = SPECIAL_AUTHORITY_SLASHES;
          else if (cps[p + 1] === 0x2f) { state = PATH_OR_AUTHORITY; p++; }
          else { url.path = ''; state = OPAQUE_PATH; }
        } else if (!override) { buffer = ''; state = NO_SCHEME; p = -1; }
        else return FAIL;
        break;
      case NO_SCHEME:
        if (!base || (opaque(base) && c !== 0x23)) return FAIL;
        if (opaque(base) && c === 0x23) {
          url.scheme = base.scheme; url.path = base.path; url.query = base.query; url.fragment = '';
          state = FRAGMENT;
        } else if (base.scheme !== 'file') { state = RELATIVE; p--; }
        else { state = FILE; p--; }
        break;
      case SPECIAL_RELATIVE_OR_AUTHORITY:
        if (c === 0x2f && cps[p + 1] === 0x2f) { state = SPECIAL_AUTHORITY_IGNORE_SLASHES; p++; }
        else { state = RELATIVE; p--; }
        break;
      case PATH_OR_AUTHORITY:
        if (c === 0x2f) state = AUTHORITY;
        else { state = PATH; p--; }
        break;
      case RELATIVE:
        url.scheme = base.scheme;
        if (c === 0x2f || (special(url) && c === 0x5c)) state = RELATIVE_SLASH;
        else {
          url.username = base.username; url.password = base.password; url.host = base.host; url.port = base.port;
          url.path = base.path.slice(); url.query = base.query;
          if (c === 0x3f) { url.query = ''; state = QUERY; }
          else if (c === 0x23) { url.fragment = ''; state = FRAGMENT; }
          else if (c !== EOF) { url.query = null; shorten(url); state = PATH; p--; }
        }
        break;
      case RELATIVE_SLASH:
        if (special(url) && (c === 0x2f || c === 0x5c)) state = SPECIAL_AUTHORITY_IGNORE_SLASHES;
        else if (c === 0x2f) state = AUTHORITY;
        else {
          url.username = base.username; url.password = base.password; url.host = base.host; url.port = base.port;
          state = PATH; p--;
        }
        break;
      case SPECIAL_AUTHORITY_SLASHES:
        if (c === 0x2f && cps[p + 1] === 0x2f) { state = SPECIAL_AUTHORITY_IGNORE_SLASHES; p++; }
        else { state = SPECIAL_AUTHORITY_IGNORE_SLASHES; p--; }
        break;
      case SPECIAL_AUTHORITY_IGNORE_SLASHES:
        if (c !== 0x2f && c !== 0x5c) { state = AUTHORITY; p--; }
        break;
      case AUTHORITY:
        if (c === 0x40) {
          if (atSignSeen) buffer = '%40' + buffer;
          atSignSeen = true;
          for (const b of codePoints(buffer)) {
            if (b === 0x3a && !passwordTokenSeen) { passwordTokenSeen = true; continue; }
            if (passwordTokenSeen) url.password += pct(b, userinfoSet);
            else url.username += pct(b, userinfoSet);
          }
          buffer = '';
        } else if (c === EOF || c === 0x2f || c === 0x3f || c === 0x23 || (special(url) && c === 0x5c)) {
          if (atSignSeen && buffer === '') return FAIL;
          p -= codePoints(buffer).length + 1;
          buffer = '';
          state = HOST;
        } else buffer += fromCodePoint(c);
        break;
      case HOST:
      case HOSTNAME:
        if (override && url.scheme === 'file') { p--; state = FILE_HOST; }
        else if (c === 0x3a && !insideBrackets) {
          if (buffer === '') return FAIL;
          if (override === HOSTNAME) return FAIL;
          const host = parseHost(buffer, !special(url));
          if (host === FAIL) return FAIL;
          url.host = host; buffer = ''; state = PORT;
        } else if (c === EOF || c === 0x2f || c === 0x3f || c === 0x23 || (special(url) && c === 0x5c)) {
          p--;
          if (special(url) && buffer === '') return FAIL;
          if (override && buffer === '' && (credentials(url) || url.port !== null)) return FAIL;
          const host = parseHost(buffer, !special(url));
          if (host === FAIL) return FAIL;
          url.host = host; buffer = ''; state = PATH_START;
          if (override) return undefined;
        } else {
          if (c === 0x5b) insideBrackets = true;
          if (c === 0x5d) insideBrackets = false;
          buffer += fromCodePoint(c);
        }
        break;
      case PORT:
        if (isDigit(c)) buffer += Str.fromCharCode(c);
        else if (c === EOF || c === 0x2f || c === 0x3f || c === 0x23 || (special(url) && c === 0x5c) || override) {
          if (buffer !== '') {
            const port = Num(buffer);
            if (port > 65535) return FAIL;
            url.port = port === defaultPort(url.scheme) ? null : port;
            buffer = '';
            if (override) return undefined;
          }
          if (override) return FAIL;
          state = PATH_START;
          p--;
        } else return FAIL;
        break;
      case FILE:
        url.scheme = 'file';
        url.host = '';
        if (c === 0x2f || c === 0x5c) state = FILE_SLASH;
        else if (base && base.scheme === 'file') {
          url.host = base.host; url.path = base.path.slice(); url.query = base.query;
          if (c === 0x3f) { url.query = ''; state = QUERY; }
          else if (c === 0x23) { url.fragment = ''; state = FRAGMENT; }
          else if (c !== EOF) {
            url.query = null;
            if (!startsWithDriveLetter(cps, p)) shorten(url);
            else url.path = [];
            state = PATH;
            p--;
          }
        } else { state = PATH; p--; }
        break;
      case FILE_SLASH:
        if (c === 0x2f || c === 0x5c) state = FILE_HOST;
        else {
          if (base && base.scheme === 'file') {
            url.host = base.host;
            if (!startsWithDriveLetter(cps, p) && base.path.length > 0 && isDriveString(base.path[0], true)) url.path[url.path.length] = base.path[0];
          }
          state = PATH;
          p--;
        }
        break;
      case FILE_HOST:
        if (c === EOF || c === 0x2f || c === 0x5c || c === 0x3f || c === 0x23) {
          p--;
          if (!override && isDriveString(buffer, false)) state = PATH;
          else if (buffer === '') {
            url.host = '';
            if (override) return undefined;
            state = PATH_START;
          } else {
            let host = parseHost(buffer, !special(url));
            if (host === FAIL) return FAIL;
            if (host === 'localhost') host = '';
            url.host = host;
            if (override) return undefined;
            buffer = '';
            state = PATH_START;
          }
        } else buffer += fromCodePoint(c);
        break;
      case PATH_START:
        if (special(url)) { state = PATH; if (c !== 0x2f && c !== 0x5c) p--; }
        else if (!override && c === 0x3f) { url.query = ''; state = QUERY; }
        else if (!override && c === 0x23) { url.fragment = ''; state = FRAGMENT; }
        else if (c !== EOF) { state = PATH; if (c !== 0x2f) p--; }
        else if (override && url.host === null) url.path[url.path.length] = '';
        break;
      case PATH:
        if (c === EOF || c === 0x2f || (special(url) && c === 0x5c) || (!override && (c === 0x3f || c === 0x23))) {
          const slash = c === 0x2f || (special(url) && c === 0x5c);
          if (doubleDot(buffer)) {
            shorten(url);
            if (!slash) url.path[url.path.length] = '';
          } else if (singleDot(buffer) && !slash) url.path[url.path.length] = '';
          else if (!singleDot(buffer)) {
            if (url.scheme === 'file' && url.path.length === 0 && isDriveString(buffer, false)) buffer = buffer[0] + ':';
            url.path[url.path.length] = buffer;
          }
          buffer = '';
          if (c === 0x3f) { url.query = ''; state = QUERY; }
          if (c === 0x23) { url.fragment = ''; state = FRAGMENT; }
        } else buffer += pct(c, pathSet);
        break;
      case OPAQUE_PATH:
        if (c === 0x3f) { url.query = ''; state = QUERY; }
        else if (c === 0x23) { url.fragment = ''; state = FRAGMENT; }
        else if (c !== EOF) url.path += pct(c, c0Set);
        break;
      case QUERY:
        if ((!override && c === 0x23) || c === EOF) {
          const set = special(url) ? specialQuerySet : querySet;
          let out = '';
          for (const b of codePoints(buffer)) out += pct(b, set);
          url.query += out;
          buffer = '';
          if (c === 0x23) { url.fragment = ''; state = FRAGMENT; }
        } else if (c !== EOF) buffer += fromCodePoint(c);
        break;
      case FRAGMENT:
        if (c !== EOF) url.fragment += pct(c, fragmentSet);
        break;
    }
    if (p >= len) break;
  }
  return url;
}

function serializePath(url) { return opaque(url) ? url.path : url.path.length === 0 ? '' : '/' + url.path.join('/'); }
function serialize(url, excludeFragment) {
  let out = url.scheme + ':';
  if (url.host !== null) {
    out += '//';
    if (credentials(url)) { out += url.username; if (url.password !== '') out += ':' + url.password; out += '@'; }
    out += url.host;
    if (url.port !== null) out += ':' + url.port;
  }
  if (url.host === null && !opaque(url) && url.path.length > 1 && url.path[0] === '') out += '/.';
  out += serializePath(url);
  if (url.query !== null) out += '?' + url.query;
  if (!excludeFragment && url.fragment !== null) out += '#' + url.fragment;
  return out;
}
function origin(url) {
  const s = url.scheme;
  if (s === 'blob') {
    const inner = opaque(url) ? basicParse(url.path, null) : FAIL;
    return inner !== FAIL && (inner.scheme === 'http' || inner.scheme === 'https') ? origin(inner) : 'null';
  }
  if (s === 'ftp' || s === 'http' || s === 'https' || s === 'ws' || s === 'wss') return s + '://' + url.host + (url.port === null ? '' : ':' + url.port);
  return 'null';
}
function stripTrailingSpaces(url) {
  if (!opaque(url) || url.fragment !== null || url.query !== null) return;
  url.path = url.path.replace(/ +$/, '');
}

// ---- application/x-www-form-urlencoded ----------------------------------------------------------------
function formParse(input) {
  const out = [];
  for (const seq of input.split('&')) {
    if (seq === '') continue;
    const eq = seq.indexOf('=');
    const name = eq < 0 ? seq : seq.slice(0, eq), value = eq < 0 ? '' : seq.slice(eq + 1);
    out[out.length] = [utf8Decode(pctDecode(name.replace(/\+/g, ' '))), utf8Decode(pctDecode(value.replace(/\+/g, ' ')))];
  }
  return out;
}
function formSerialize(list) {
  let out = '';
  for (let i = 0; i < list.length; i++) {
    if (i > 0) out += '&';
    out += pctString(list[i][0], formSet, true) + '=' + pctString(list[i][1], formSet, true);
  }
  return out;
}

// ---- URLSearchParams ----------------------------------------------------------------------------------
let setList, newParams;
class URLSearchParams {
  #list = [];
  #url = null;
  static {
    setList = (params, list) => { params.#list = list; };
    newParams = (list, url) => { const p = new URLSearchParams(); p.#list = list; p.#url = url; return p; };
  }
  constructor(init = '') {
    if (init !== null && (typeof init === 'object' || typeof init === 'function')) {
      const method = init[iteratorSymbol];
      if (method !== undefined && method !== null) {
        if (typeof method !== 'function') throw new TE("URLSearchParams: the init's Symbol.iterator is not a function");
        for (const pair of apply(method, init, [])) {
          if (pair === null || (typeof pair !== 'object' && typeof pair !== 'function')) throw new TE('URLSearchParams: each pair must be an iterable of [name, value]');
          const items = Arr.from(pair);
          if (items.length !== 2) throw new TE('URLSearchParams: each pair must have exactly two items, name and value');
          this.#list[this.#list.length] = [usv(items[0]), usv(items[1])];
        }
      } else {
        for (const k of ownKeys(init)) {
          const d = getOwnPropertyDescriptor(init, k);
          if (d === undefined || !d.enumerable) continue;
          if (typeof k === 'symbol') throw new TE('URLSearchParams: a record key cannot be a symbol');
          this.#list[this.#list.length] = [usv(k), usv(init[k])];
        }
      }
    } else {
      const s = usv(init);
      this.#list = formParse(s[0] === '?' ? s.slice(1) : s);
    }
  }
  #update() {
    const url = this.#url;
    if (url === null) return;
    const s = formSerialize(this.#list);
    url.query = s === '' ? null : s;
    if (s === '') stripTrailingSpaces(url);
  }
  get size() { return this.#list.length; }
  append(name, value) {
    if (arguments.length < 2) throw new TE('URLSearchParams.append: 2 arguments required');
    this.#list[this.#list.length] = [usv(name), usv(value)];
    this.#update();
  }
  delete(name, value = undefined) {
    if (arguments.length < 1) throw new TE('URLSearchParams.delete: 1 argument required');
    const n = usv(name), v = value === undefined ? undefined : usv(value);
    this.#list = this.#list.filter((e) => !(e[0] === n && (v === undefined || e[1] === v)));
    this.#update();
  }
  get(name) {
    if (arguments.length < 1) throw new TE('URLSearchParams.get: 1 argument required');
    const n = usv(name);
    for (const e of this.#list) if (e[0] === n) return e[1];
    return null;
  }
  getAll(name) {
    if (arguments.length < 1) throw new TE('URLSearchParams.getAll: 1 argument required');
    const n = usv(name), out = [];
    for (const e of this.#list) if (e[0] === n) out[out.length] = e[1];
    return out;
  }
  has(name, value = undefined) {
    if (arguments.length < 1) throw new TE('URLSearchParams.has: 1 argument required');
    const n = usv(name), v = value === undefined ? undefined : usv(value);
    for (const e of this.#list) if (e[0] === n && (v === undefined || e[1] === v)) return true;
    return false;
  }
  set(name, value) {
    if (arguments.length < 2) throw new TE('URLSearchParams.set: 2 arguments required');
    const n = usv(name), v = usv(value), list = this.#list, out = [];
    let found = false;
    for (const e of list) {
      if (e[0] !== n) out[out.length] = e;
      else if (!found) { found = true; out[out.length] = [n, v]; }
    }
    if (!found) out[out.length] = [n, v];
    this.#list = out;
    this.#update();
  }
  sort() {
    // Stable, by UTF-16 code units of the names.
    const indexed = this.#list.map((e, i) => [e, i]);
    indexed.sort((a, b) => (a[0][0] < b[0][0] ? -1 : a[0][0] > b[0][0] ? 1 : a[1] - b[1]));
    this.#list = indexed.map((x) => x[0]);
    this.#update();
  }
  forEach(callback, thisArg = undefined) {
    if (typeof callback !== 'function') throw new TE('URLSearchParams.forEach: the callback must be a function');
    for (let i = 0; i < this.#list.length; i++) { const e = this.#list[i]; apply(callback, thisArg, [e[1], e[0], this]); }
  }
  *entries() { for (let i = 0; i < this.#list.length; i++) { const e = this.#list[i]; yield [e[0], e[1]]; } }
  *keys() { for (let i = 0; i < this.#list.length; i++) yield this.#list[i][0]; }
  *values() { for (let i = 0; i < this.#list.length; i++) yield this.#list[i][1]; }
  toString() { return formSerialize(this.#list); }
}
defineProperty(URLSearchParams.prototype, iteratorSymbol, { value: URLSearchParams.prototype.entries, writable: true, configurable: true });
defineProperty(URLSearchParams.prototype, Symbol.toStringTag, { value: 'URLSearchParams', configurable: true });

// ---- URL ----------------------------------------------------------------------------------------------
function parseWithBase(url, base) {
  let baseRecord = null;
  if (base !== undefined) {
    baseRecord = basicParse(usv(base), null);
    if (baseRecord === FAIL) return FAIL;
  }
  return basicParse(usv(url), baseRecord);
}
function invalid(url, base) {
  const err = new TE('Invalid URL: ' + Str(url) + (base === undefined ? '' : ' (base ' + Str(base) + ')'));
  defineProperty(err, 'code', { value: 'ERR_INVALID_URL', writable: true, enumerable: false, configurable: true });
  return err;
}
class URL {
  #url;
  #params;
  constructor(url, base = undefined) {
    if (arguments.length < 1) throw new TE('URL: 1 argument required');
    const record = parseWithBase(url, base);
    if (record === FAIL) throw invalid(url, base);
    this.#url = record;
    this.#params = newParams(record.query === null ? [] : formParse(record.query), record);
  }
  static canParse(url, base = undefined) {
    if (arguments.length < 1) throw new TE('URL.canParse: 1 argument required');
    return parseWithBase(url, base) !== FAIL;
  }
  static parse(url, base = undefined) {
    if (arguments.length < 1) throw new TE('URL.parse: 1 argument required');
    return parseWithBase(url, base) === FAIL ? null : new URL(url, base);
  }
  get href() { return serialize(this.#url, false); }
  set href(value) {
    const record = basicParse(usv(value), null);
    if (record === FAIL) throw invalid(value);
    O.assign(this.#url, record);
    setList(this.#params, record.query === null ? [] : formParse(record.query));
  }
  get origin() { return origin(this.#url); }
  get protocol() { return this.#url.scheme + ':'; }
  set protocol(value) { basicParse(usv(value) + ':', null, this.#url, SCHEME_START); }
  get username() { return this.#url.username; }
  set username(value) {
    const url = this.#url;
    if (cannotHaveCredentials(url)) return;
    let out = '';
    for (const c of codePoints(usv(value))) out += pct(c, userinfoSet);
    url.username = out;
  }
  get password() { return this.#url.password; }
  set password(value) {
    const url = this.#url;
    if (cannotHaveCredentials(url)) return;
    let out = '';
    for (const c of codePoints(usv(value))) out += pct(c, userinfoSet);
    url.password = out;
  }
  get host() {
    const url = this.#url;
    if (url.host === null) return '';
    return url.port === null ? url.host : url.host + ':' + url.port;
  }
  set host(value) { if (!opaque(this.#url)) basicParse(usv(value), null, this.#url, HOST); }
  get hostname() { return this.#url.host ?? ''; }
  set hostname(value) { if (!opaque(this.#url)) basicParse(usv(value), null, this.#url, HOSTNAME); }
  get port() { return this.#url.port === null ? '' : Str(this.#url.port); }
  set port(value) {
    const url = this.#url;
    if (cannotHaveCredentials(url)) return;
    const s = usv(value);
    if (s === '') url.port = null;
    else basicParse(s, null, url, PORT);
  }
  get pathname() { return serializePath(this.#url); }
  set pathname(value) {
    const url = this.#url;
    if (opaque(url)) return;
    url.path = [];
    basicParse(usv(value), null, url, PATH_START);
  }
  get search() { const q = this.#url.query; return q === null || q === '' ? '' : '?' + q; }
  set search(value) {
    const url = this.#url, s = usv(value);
    if (s === '') {
      url.query = null;
      setList(this.#params, []);
      stripTrailingSpaces(url);
      return;
    }
    const input = s[0] === '?' ? s.slice(1) : s;
    url.query = '';
    basicParse(input, null, url, QUERY);
    setList(this.#params, formParse(input));
  }
  get searchParams() { return this.#params; }
  get hash() { const f = this.#url.fragment; return f === null || f === '' ? '' : '#' + f; }
  set hash(value) {
    const url = this.#url, s = usv(value);
    if (s === '') {
      url.fragment = null;
      stripTrailingSpaces(url);
      return;
    }
    url.fragment = '';
    basicParse(s[0] === '#' ? s.slice(1) : s, null, url, FRAGMENT);
  }
  toString() { return serialize(this.#url, false); }
  toJSON() { return serialize(this.#url, false); }
}
for (const k of ['href', 'origin', 'protocol', 'username', 'password', 'host', 'hostname', 'port', 'pathname', 'search', 'searchParams', 'hash']) {
  const d = getOwnPropertyDescriptor(URL.prototype, k);
  d.enumerable = true;
  defineProperty(URL.prototype, k, d);
}
defineProperty(URL.prototype, Symbol.toStringTag, { value: 'URL', configurable: true });

return { globals: { URL, URLSearchParams }, lib: { URL, URLSearchParams } };
})`;
