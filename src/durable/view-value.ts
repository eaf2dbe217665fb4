import { decodeValue, sha256Hex, toJsonView } from '../codec/index.ts';

/**
 * A call's arguments or result over this many characters of tagged JSON is shown by its size and digest in a
 * task's view (the events route gives the entry in full): the view costs what it shows (ADR 0029).
 */
export const MAX_VIEW_VALUE_CHARS = 16 * 1024;

/** A journaled value (tagged JSON) as a view shows it: decoded, or its size and digest when it is big. */
export function viewValue(text: unknown): unknown {
  if (typeof text !== 'string') return null;
  if (text.length > MAX_VIEW_VALUE_CHARS) {
    return { truncated: true, bytes: Buffer.byteLength(text), sha256: sha256Hex(text) };
  }
  try {
    return toJsonView(decodeValue(text));
  } catch {
    return text;
  }
}
