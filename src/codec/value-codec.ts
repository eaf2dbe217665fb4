import { CodecallError } from '../errors/index.ts';

/**
 * The wire format for values crossing the sandbox boundary: JSON, with values JSON cannot hold tagged as
 * `{"$cc": tag, "v": ...}` (undefined, Date, Map, Set, BigInt, NaN/Infinity/-0, objects owning a "$cc" key).
 * The guest runtime carries its own copy of this codec (it may import nothing from the host).
 */
export const TAG = '$cc';

export interface EncodeOptions {
  /** Name of the root in error messages (`result`, `args`). */
  root?: string;
  maxDepth?: number;
}

const DEFAULT_MAX_DEPTH = 200;

// Tags made by the fast path carry this prototype so the replacer passes them through unchanged.
const TAG_PROTO: object = Object.freeze(Object.create(null) as object);

function tagged(tag: string, v?: unknown): Record<string, unknown> {
  const o = Object.create(TAG_PROTO) as Record<string, unknown>;
  o[TAG] = tag;
  if (v !== undefined) o.v = v;
  return o;
}

class NeedsSlowPath extends Error {}

function replacer(this: unknown, key: string, v: unknown): unknown {
  switch (typeof v) {
    case 'string': {
      const raw = (this as Record<string, unknown>)[key];
      if (raw instanceof Date) return tagged('d', Number.isNaN(raw.getTime()) ? null : raw.getTime());
      return v;
    }
    case 'number':
      if (Number.isFinite(v)) return Object.is(v, -0) ? tagged('n', '-0') : v;
      return tagged('n', Number.isNaN(v) ? 'NaN' : v > 0 ? 'Infinity' : '-Infinity');
    case 'boolean':
      return v;
    case 'undefined':
      return tagged('u');
    case 'bigint':
      return tagged('b', v.toString());
    case 'object': {
      if (v === null || Array.isArray(v)) return v;
      if (Object.getPrototypeOf(v) === TAG_PROTO) return { ...(v as Record<string, unknown>) };
      if (v instanceof Map) return tagged('m', [...(v as Map<unknown, unknown>)]);
      if (v instanceof Set) return tagged('s', [...(v as Set<unknown>)]);
      if (v instanceof Promise || v instanceof ArrayBuffer || ArrayBuffer.isView(v))
        throw new NeedsSlowPath();
      if (Object.hasOwn(v, TAG)) return tagged('o', Object.entries(v));
      return v;
    }
    default:
      throw new NeedsSlowPath();
  }
}

/** True when JSON.stringify alone encodes `value` exactly (no tags needed); bounded by `budget` nodes. */
function isPlainJson(value: unknown, budget: { n: number }): boolean {
  if (--budget.n < 0) return false;
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value) && !Object.is(value, -0);
    case 'object': {
      if (value === null) return true;
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++)
          if (!(i in value) || !isPlainJson(value[i], budget)) return false;
        return true;
      }
      const proto: unknown = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) return false;
      if (Object.hasOwn(value, TAG) || Object.hasOwn(value, 'toJSON')) return false;
      for (const key of Object.keys(value)) {
        if (!isPlainJson((value as Record<string, unknown>)[key], budget)) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

function hasToJson(v: unknown): v is { toJSON(): unknown } {
  return (
    typeof v === 'object' &&
    v !== null &&
    !(v instanceof Date) &&
    typeof (v as { toJSON?: unknown }).toJSON === 'function'
  );
}

/**
 * A value already in the wire format: encodeValue passes it through as is (no decode and re-encode), so a value
 * served from a journal reaches the guest byte for byte as it was first delivered.
 */
export class EncodedValue {
  constructor(readonly encoded: string) {}
}

export function encodeValue(value: unknown, options: EncodeOptions = {}): string {
  if (value instanceof EncodedValue) return value.encoded;
  // Fastest path: plain JSON needs no replacer (V8's stringify is much faster without one).
  if (isPlainJson(value, { n: 1000 })) return JSON.stringify(value);
  // Fast path: native JSON.stringify with a replacer. Anything it cannot do goes to the walk, which names the path.
  try {
    return JSON.stringify(value, replacer);
  } catch {
    return slowEncode(value, options);
  }
}

function slowEncode(value: unknown, options: EncodeOptions): string {
  const root = options.root ?? 'value';
  const maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
  const ancestors = new Set<object>();

  const fail = (path: string, what: string): never => {
    throw new CodecallError('RESULT_INVALID', `${path}: ${what} cannot cross the sandbox boundary`, {
      details: { path },
    });
  };

  const walk = (value: unknown, path: string, depth: number): unknown => {
    // Like JSON.stringify (the fast path), honour a toJSON method; Date is tagged instead.
    const v = hasToJson(value) ? value.toJSON() : value;
    switch (typeof v) {
      case 'string':
      case 'boolean':
        return v;
      case 'number':
        if (Number.isNaN(v)) return { [TAG]: 'n', v: 'NaN' };
        if (v === Infinity) return { [TAG]: 'n', v: 'Infinity' };
        if (v === -Infinity) return { [TAG]: 'n', v: '-Infinity' };
        if (Object.is(v, -0)) return { [TAG]: 'n', v: '-0' };
        return v;
      case 'undefined':
        return { [TAG]: 'u' };
      case 'bigint':
        return { [TAG]: 'b', v: v.toString() };
      case 'function':
        return fail(path, 'a function');
      case 'symbol':
        return fail(path, 'a symbol');
    }
    if (v === null) return null;
    const obj = v as object;
    if (depth > maxDepth) return fail(path, `nesting deeper than ${maxDepth}`);
    if (ancestors.has(obj)) return fail(path, 'a circular reference');
    ancestors.add(obj);
    try {
      if (obj instanceof Date) {
        const t = obj.getTime();
        return { [TAG]: 'd', v: Number.isNaN(t) ? null : t };
      }
      if (obj instanceof Map) {
        return {
          [TAG]: 'm',
          v: [...obj].map(([k, x], i) => [
            walk(k, `${path}<key ${i}>`, depth + 1),
            walk(x, `${path}.get(${i})`, depth + 1),
          ]),
        };
      }
      if (obj instanceof Set)
        return { [TAG]: 's', v: [...obj].map((x, i) => walk(x, `${path}<item ${i}>`, depth + 1)) };
      if (Array.isArray(obj)) return obj.map((x, i) => walk(x, `${path}[${i}]`, depth + 1));
      if (obj instanceof Promise) return fail(path, 'a promise');
      if (ArrayBuffer.isView(obj) || obj instanceof ArrayBuffer) return fail(path, 'binary data');
      const out: Record<string, unknown> = {};
      let tagged = false;
      for (const key of Object.keys(obj)) {
        if (key === TAG) tagged = true;
        define(out, key, walk((obj as Record<string, unknown>)[key], `${path}.${key}`, depth + 1));
      }
      return tagged ? { [TAG]: 'o', v: Object.entries(out) } : out;
    } finally {
      ancestors.delete(obj);
    }
  };

  return JSON.stringify(walk(value, root, 0));
}

export function decodeValue(text: string): unknown {
  const parsed = JSON.parse(text) as unknown;
  return text.includes(`"${TAG}"`) ? revive(parsed) : parsed;
}

// A walk rather than a JSON.parse reviver: a reviver deletes keys whose value revives to undefined.
function revive(v: unknown): unknown {
  if (typeof v !== 'object' || v === null) return v;
  if (Array.isArray(v)) return v.map(revive);
  const rec = v as Record<string, unknown>;
  if (typeof rec[TAG] === 'string') return untag(rec[TAG], rec.v);
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(rec)) define(out, key, revive(rec[key]));
  return out;
}

/** Defines an own data property, so a key such as `__proto__` never reaches the prototype. */
function define(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function untag(tag: string, v: unknown): unknown {
  switch (tag) {
    case 'u':
      return undefined;
    case 'n':
      return v === '-0' ? -0 : Number(v);
    case 'b':
      return BigInt(String(v));
    case 'd':
      return new Date(typeof v === 'number' ? v : NaN);
    case 'm':
      return new Map((v as [unknown, unknown][]).map(([k, x]) => [revive(k), revive(x)]));
    case 's':
      return new Set((v as unknown[]).map(revive));
    case 'o': {
      const out: Record<string, unknown> = {};
      for (const [k, x] of v as [string, unknown][]) define(out, k, revive(x));
      return out;
    }
    default:
      throw new CodecallError('RESULT_INVALID', `unknown value tag ${JSON.stringify(tag)}`);
  }
}
