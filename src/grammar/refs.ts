/**
 * $ref targets inside the one schema document: "#", JSON pointers ("#/$defs/a"), plain-name anchors ("#a") and
 * the $id of a subschema given in full or as its last segment. Anything else (a remote document) is undefined:
 * the compiler reports it.
 */
function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function walk(
  value: unknown,
  visit: (schema: Record<string, unknown>, pointer: string) => boolean,
  pointer = '#',
): boolean {
  if (Array.isArray(value)) return value.some((item, i) => walk(item, visit, `${pointer}/${i}`));
  if (!isObject(value)) return false;
  if (visit(value, pointer)) return true;
  return Object.entries(value).some(([key, child]) =>
    ['enum', 'const', 'default', 'examples'].includes(key)
      ? false
      : walk(child, visit, `${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`),
  );
}

export interface RefTarget {
  readonly schema: unknown;
  /** A canonical pointer naming the target (one rule per target). */
  readonly pointer: string;
}

export function resolveRef(root: unknown, ref: string): RefTarget | undefined {
  if (ref === '#' || ref === '') return { schema: root, pointer: '#' };
  if (ref.startsWith('#/')) {
    let at: unknown = root;
    for (const raw of ref.slice(2).split('/')) {
      const part = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
      if (Array.isArray(at)) at = at[Number(part)];
      else if (isObject(at) && Object.hasOwn(at, part)) at = at[part];
      else return undefined;
    }
    return at === undefined ? undefined : { schema: at, pointer: ref };
  }
  let found: RefTarget | undefined;
  const anchor = ref.startsWith('#') ? ref.slice(1) : undefined;
  walk(root, (schema, pointer) => {
    const id = typeof schema.$id === 'string' ? schema.$id : undefined;
    const hit =
      anchor !== undefined
        ? schema.$anchor === anchor
        : id !== undefined && pointer !== '#' && (id === ref || id.endsWith(`/${ref}`));
    if (hit) found = { schema, pointer };
    return hit;
  });
  return found;
}
