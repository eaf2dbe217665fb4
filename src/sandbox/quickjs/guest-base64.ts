/**
 * base64 for the guest's fetch (guest-fetch.ts): the bodies of requests and of responses cross to and from the host
 * as base64 text. The host answers inputs of 32 bytes or more natively (guest-web.ts's `nativeBase64` and
 * `nativeFromBase64`, bytes-host.ts); the code here does the rest, and whatever the host declines. A plain string
 * like guest-runtime.ts, evaluated once into the template VM; its factory takes the `lib` of the factories before
 * it and adds `toBase64(bytes)` and `fromBase64(text)` (a TypeError for text that is not base64).
 */
export const GUEST_BASE64_SOURCE = String.raw`(function (lib) {
'use strict';
const O = Object, Str = String, TE = TypeError, U8 = Uint8Array;
const apply = Reflect.apply;
const arrayPush = Array.prototype.push, arrayJoin = Array.prototype.join;
const { nativeBase64, nativeFromBase64 } = lib;
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
function toBase64(bytes) {
  const native = nativeBase64(bytes);
  if (native !== null) return native;
  const parts = [];
  let chunk = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const a = bytes[i], b = i + 1 < bytes.length ? bytes[i + 1] : 0, c = i + 2 < bytes.length ? bytes[i + 2] : 0;
    const n = (a << 16) | (b << 8) | c;
    chunk += ALPHABET[(n >> 18) & 63] + ALPHABET[(n >> 12) & 63] +
      (i + 1 < bytes.length ? ALPHABET[(n >> 6) & 63] : '=') + (i + 2 < bytes.length ? ALPHABET[n & 63] : '=');
    if (chunk.length >= 4096) { apply(arrayPush, parts, [chunk]); chunk = ''; }
  }
  apply(arrayPush, parts, [chunk]);
  return apply(arrayJoin, parts, ['']);
}
// By character: indexing a primitive string and a null-prototype table is what a program cannot reach (no
// method call per character: a large body is millions of them).
const DIGITS = O.create(null);
for (let i = 0; i < 64; i++) DIGITS[ALPHABET[i]] = i;
function fromBase64(text) {
  const s = Str(text);
  const native = nativeFromBase64(s);
  if (native !== null) return native;
  let end = s.length;
  while (end > 0 && s[end - 1] === '=') end--;
  const out = new U8((end * 3) >> 2);
  const bad = () => { throw new TE('the host sent a body that is not base64'); };
  let j = 0, i = 0;
  const whole = end - (end & 3);
  for (; i < whole; i += 4) {
    const a = DIGITS[s[i]], b = DIGITS[s[i + 1]], c = DIGITS[s[i + 2]], d = DIGITS[s[i + 3]];
    if (a === undefined || b === undefined || c === undefined || d === undefined) bad();
    const n = (a << 18) | (b << 12) | (c << 6) | d;
    out[j++] = n >> 16; out[j++] = (n >> 8) & 255; out[j++] = n & 255;
  }
  let bits = 0, value = 0;
  for (; i < end; i++) {
    const v = DIGITS[s[i]];
    if (v === undefined) bad();
    value = (value << 6) | v; bits += 6;
    if (bits >= 8) { bits -= 8; out[j++] = (value >> bits) & 255; }
  }
  return out;
}

return { globals: {}, lib: { toBase64, fromBase64 } };
})`;
