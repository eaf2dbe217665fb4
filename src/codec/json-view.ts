/** Renders a guest result for JSON output: Date -> ISO string, Map -> object or entries, Set -> array, BigInt -> string. */
export function toJsonView(value: unknown, seen = new Set<object>()): unknown {
  if (value === undefined) return null;
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  if (typeof value !== 'object' || value === null) return value;
  if (seen.has(value)) return '[Circular]';
  seen.add(value);
  try {
    if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
    if (value instanceof Set) return [...value].map((v) => toJsonView(v, seen));
    if (value instanceof Map) {
      const stringKeys = [...value.keys()].every((k) => typeof k === 'string');
      return stringKeys
        ? Object.fromEntries([...value].map(([k, v]) => [k, toJsonView(v, seen)]))
        : [...value].map(([k, v]) => [toJsonView(k, seen), toJsonView(v, seen)]);
    }
    if (Array.isArray(value)) return value.map((v) => toJsonView(v, seen));
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toJsonView(v, seen)]));
  } finally {
    seen.delete(value);
  }
}
