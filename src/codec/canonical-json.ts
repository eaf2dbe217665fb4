/** JSON with object keys sorted recursively: the same data always gives the same text (for hashes). */
export function canonicalJson(value: unknown): string {
  // Round-trip first so toJSON, undefined and non-finite numbers behave exactly as in JSON.stringify.
  const plain: unknown = JSON.parse(JSON.stringify(value) ?? 'null');
  return JSON.stringify(sortKeys(plain));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      // defineProperty: a "__proto__" key must stay a key, not become the prototype.
      Object.defineProperty(sorted, key, {
        value: sortKeys((value as Record<string, unknown>)[key]),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return sorted;
  }
  return value;
}
