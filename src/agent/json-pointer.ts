import { isRecord } from '../spec/is-record.ts';

/**
 * The value a local JSON Pointer reference (`#`, `#/$defs/x`, `#/items/0`, ...) names in `root`, undefined when
 * it does not resolve. Only own properties and array indexes count: `#/__proto__` or `#/$defs/constructor`
 * name nothing in a schema, whatever the prototype holds.
 */
export function resolvePointer(root: unknown, ref: string): unknown {
  if (ref === '#') return root;
  if (!ref.startsWith('#/')) return undefined;
  let current: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    let segment: string;
    try {
      segment = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    } catch {
      return undefined;
    }
    if (Array.isArray(current) && /^\d+$/.test(segment)) current = current[Number(segment)];
    else if (isRecord(current) && Object.hasOwn(current, segment)) current = current[segment];
    else return undefined;
  }
  return current;
}
