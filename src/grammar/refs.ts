/**
 * $ref targets inside the one schema document. Every subschema's base URI is worked out from the `$id`s above it
 * (RFC 3986 resolution), so "#/$defs/a", "#anchor", "other.json#/x" and absolute URIs resolve as JSON Schema says,
 * relative to the schema they appear in. Remote documents are not fetched: such a ref is undefined, and the
 * compiler reports it.
 */
type Obj = Record<string, unknown>;
const isObject = (value: unknown): value is Obj =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export interface RefTarget {
  readonly schema: unknown;
  /** A canonical pointer into the document naming the target (one rule per target). */
  readonly pointer: string;
}

/** The base of a document without an `$id` of its own. */
const DEFAULT_BASE = 'https://codecall.invalid/schema.json';
const NOT_SCHEMAS = new Set(['enum', 'const', 'default', 'examples', 'example']);

function resolveUri(ref: string, base: string): string | undefined {
  if (ref.startsWith('#')) return `${base.split('#')[0]}${ref}`;
  try {
    return new URL(ref, base).href;
  } catch {
    return /^[a-z][a-z0-9+.-]*:/i.test(ref) ? ref : undefined;
  }
}

const escapePart = (key: string): string => key.replace(/~/g, '~0').replace(/\//g, '~1');

export class SchemaIndex {
  private readonly bases = new Map<Obj, string>();
  private readonly resources = new Map<string, RefTarget>();
  private readonly anchors = new Map<string, RefTarget>();
  readonly rootBase: string;

  /** `documents`: other schema documents by URI, for refs to them (nothing is fetched). */
  constructor(
    readonly root: unknown,
    documents: Readonly<Record<string, unknown>> = {},
  ) {
    const rootId =
      isObject(root) && typeof root.$id === 'string' ? resolveUri(root.$id, DEFAULT_BASE) : undefined;
    this.rootBase = (rootId ?? DEFAULT_BASE).split('#')[0]!;
    for (const [uri, document] of Object.entries(documents)) {
      const id =
        isObject(document) && typeof document.$id === 'string' ? resolveUri(document.$id, uri) : undefined;
      const base = (id ?? uri).split('#')[0]!;
      this.resources.set(uri.split('#')[0]!, { schema: document, pointer: `${base}#` });
      this.resources.set(base, { schema: document, pointer: `${base}#` });
      this.walk(document, base, `${base}#`);
    }
    this.resources.set(this.rootBase, { schema: root, pointer: '#' });
    this.walk(root, this.rootBase, '#');
  }

  private walk(value: unknown, base: string, pointer: string): void {
    if (Array.isArray(value)) {
      value.forEach((item, i) => this.walk(item, base, `${pointer}/${i}`));
      return;
    }
    if (!isObject(value)) return;
    let here = base;
    if (typeof value.$id === 'string' && !pointer.endsWith('#')) {
      const id = resolveUri(value.$id, base);
      if (id !== undefined) {
        here = id.split('#')[0]!;
        this.resources.set(here, { schema: value, pointer });
      }
    }
    this.bases.set(value, here);
    if (typeof value.$anchor === 'string')
      this.anchors.set(`${here}#${value.$anchor}`, { schema: value, pointer });
    for (const [key, child] of Object.entries(value)) {
      if (!NOT_SCHEMAS.has(key)) this.walk(child, here, `${pointer}/${escapePart(key)}`);
    }
  }

  /** The base URI a schema of this document is read against; undefined for one built by the compiler. */
  baseOf(schema: unknown): string | undefined {
    return isObject(schema) ? this.bases.get(schema) : undefined;
  }

  resolve(ref: string, base: string = this.rootBase): RefTarget | undefined {
    const uri = resolveUri(ref, base);
    if (uri === undefined) return undefined;
    const hash = uri.indexOf('#');
    const doc = hash < 0 ? uri : uri.slice(0, hash);
    const fragment = hash < 0 ? '' : decodeURIComponent(uri.slice(hash + 1));
    const resource = this.resources.get(doc);
    if (resource === undefined) return undefined;
    if (fragment === '') return resource;
    if (!fragment.startsWith('/')) return this.anchors.get(`${doc}#${fragment}`);
    let at: unknown = resource.schema;
    for (const raw of fragment.slice(1).split('/')) {
      const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
      if (Array.isArray(at)) at = at[Number(part)];
      else if (isObject(at) && Object.hasOwn(at, part)) at = at[part];
      else return undefined;
    }
    return at === undefined ? undefined : { schema: at, pointer: `${resource.pointer}${fragment}` };
  }
}

const indexes = new WeakMap<object, SchemaIndex>();

/** `ref` read against the document's root (a helper for callers without a current base). */
export function resolveRef(root: unknown, ref: string): RefTarget | undefined {
  if (!isObject(root)) return ref === '#' || ref === '' ? { schema: root, pointer: '#' } : undefined;
  let index = indexes.get(root);
  if (index === undefined) {
    index = new SchemaIndex(root);
    indexes.set(root, index);
  }
  return index.resolve(ref);
}
