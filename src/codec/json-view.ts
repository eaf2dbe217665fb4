/**
 * Renders a guest value for JSON output (ADR 0002, "values leaving as JSON"). NaN, ±Infinity and undefined are
 * what `JSON.stringify` makes of them: NaN and ±Infinity are null, an undefined property is left out, an
 * undefined array item (or a top-level undefined) is null. What JSON has no form for: a Date is its ISO string
 * (null when invalid), a Set an array, a Map an object (entry pairs when a key is not a string), a BigInt its
 * decimal string. A cycle (never in a decoded value) is `[Circular]`.
 */
export function toJsonView(value: unknown, seen = new Set<object>()): unknown {
  if (value === undefined) return null;
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number') return Number.isFinite(value) ? value + 0 : null;
  if (typeof value !== 'object' || value === null) return value;
  if (seen.has(value)) return '[Circular]';
  seen.add(value);
  try {
    if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
    if (value instanceof Set) return [...value].map((v) => toJsonView(v, seen));
    if (value instanceof Map) {
      const stringKeys = [...value.keys()].every((k) => typeof k === 'string');
      return stringKeys
        ? entriesToObject(
            [...value].map(([k, v]) => [k as string, v]),
            seen,
          )
        : [...value].map(([k, v]) => [toJsonView(k, seen), toJsonView(v, seen)]);
    }
    if (Array.isArray(value)) return value.map((v) => toJsonView(v, seen));
    return entriesToObject(Object.entries(value), seen);
  } finally {
    seen.delete(value);
  }
}

/** An object of the entries whose value is not undefined (own properties: a `__proto__` key stays a key). */
function entriesToObject(entries: readonly [string, unknown][], seen: Set<object>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of entries) {
    if (v === undefined) continue;
    Object.defineProperty(out, k, {
      value: toJsonView(v, seen),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/**
 * A tool's arguments as it receives them: NaN, ±Infinity and undefined as `JSON.stringify` makes of them (an
 * undefined property left out; NaN, ±Infinity and an undefined array item null; -0 is 0), so that a tool and its
 * input schema see what a JSON caller would send. Date, Map, Set and BigInt, which JSON has no form for, stay
 * what they are. Decoded values only: no cycles, plain objects.
 */
export function jsonArguments(value: unknown): unknown {
  if (typeof value === 'number') return Number.isFinite(value) ? value + 0 : null;
  if (typeof value !== 'object' || value === null || value instanceof Date) return value;
  if (Array.isArray(value)) return value.map((v) => (v === undefined ? null : jsonArguments(v)));
  if (value instanceof Map) {
    return new Map([...value].map(([k, v]) => [jsonArguments(k), jsonArguments(v)]));
  }
  if (value instanceof Set) return new Set([...value].map(jsonArguments));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (v === undefined) continue;
    Object.defineProperty(out, k, {
      value: jsonArguments(v),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}
