/** A JSON object as parsed: not null, not an array (what a schema node or a reply body is read as). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
