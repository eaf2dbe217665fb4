import { createHash } from 'node:crypto';

/** JSON with object keys sorted recursively, so equal data always hashes the same. */
export function canonicalJson(value: unknown): string {
  // Round-trip first so toJSON, undefined and non-finite numbers behave exactly as in JSON.stringify.
  const plain: unknown = JSON.parse(JSON.stringify(value) ?? 'null');
  return JSON.stringify(sortKeys(plain));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort())
      sorted[key] = sortKeys((value as Record<string, unknown>)[key]);
    return sorted;
  }
  return value;
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** One link of a task's journal hash chain; `prevChecksum` is '' for seq 1. */
export function journalChecksum(prevChecksum: string, seq: number, type: string, data: unknown): string {
  return sha256Hex(`${prevChecksum}\n${seq}\n${type}\n${canonicalJson(data)}`);
}
