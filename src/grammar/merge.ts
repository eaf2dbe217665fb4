/**
 * allOf as one schema: the members' keywords combined so one grammar enforces all of them (types intersected,
 * required united, bounds tightened, properties merged per name). What cannot be combined (two different patterns,
 * two formats) is returned as a conflict for the compiler to report; the merged schema keeps the first.
 */
import { ANNOTATIONS } from './keywords.ts';

type Schema = Record<string, unknown> | boolean;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export const canonical = (value: unknown): string =>
  JSON.stringify(value, (_k, v: unknown) =>
    isObject(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1))) : v,
  );

function both(a: unknown, b: unknown): unknown {
  if (a === undefined || a === true) return b;
  if (b === undefined || b === true) return a;
  if (a === false || b === false) return false;
  // Two equal schemas are one (a generated schema often repeats a property's schema in its pattern's).
  if (canonical(a) === canonical(b)) return a;
  return { allOf: [a, b] };
}

function types(value: unknown): string[] | undefined {
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? (value as string[]) : undefined;
}

function intersectTypes(a: string[], b: string[]): string[] {
  const out = new Set<string>();
  for (const t of a) {
    if (b.includes(t)) out.add(t);
    else if (t === 'integer' && b.includes('number')) out.add('integer');
    else if (t === 'number' && b.includes('integer')) out.add('integer');
  }
  return [...out];
}

export interface MergeResult {
  readonly schema: Schema;
  /** Keywords both sides set differently that one grammar cannot hold. */
  readonly conflicts: string[];
}

export function mergeSchemas(a: Schema, b: Schema): MergeResult {
  if (a === false || b === false) return { schema: false, conflicts: [] };
  if (canonical(a) === canonical(b)) return { schema: a, conflicts: [] };
  if (a === true) return { schema: b, conflicts: [] };
  if (b === true) return { schema: a, conflicts: [] };
  const out: Record<string, unknown> = { ...a };
  const conflicts: string[] = [];
  for (const [key, bv] of Object.entries(b)) {
    const av = out[key];
    if (av === undefined) {
      out[key] = bv;
      continue;
    }
    switch (key) {
      case 'type':
        out.type = intersectTypes(types(av) ?? [], types(bv) ?? []);
        break;
      case '$codecall:forbidden':
      case 'required':
        out[key] = [...new Set([...(av as string[]), ...(bv as string[])])];
        break;
      case 'properties':
      case 'patternProperties': {
        const merged: Record<string, unknown> = { ...(av as Record<string, unknown>) };
        for (const [name, schema] of Object.entries(bv as Record<string, unknown>))
          merged[name] = both(merged[name], schema);
        out[key] = merged;
        break;
      }
      case 'additionalProperties':
        out[key] = both(av, bv);
        break;
      case 'items':
      case 'additionalItems':
      case 'prefixItems':
        break; // mergeArrays below

      case 'allOf':
        out.allOf = [...(av as unknown[]), ...(bv as unknown[])];
        break;
      case 'anyOf':
      case 'oneOf':
        // Both sides' alternatives must hold: keep one here, the other as an allOf member.
        out.allOf = [...((out.allOf as unknown[] | undefined) ?? []), { [key]: bv }];
        break;
      case 'minimum':
      case 'minLength':
      case 'minItems':
      case 'exclusiveMinimum':
        out[key] = typeof av === 'number' && typeof bv === 'number' ? Math.max(av, bv) : bv;
        break;
      case 'maximum':
      case 'maxLength':
      case 'maxItems':
      case 'exclusiveMaximum':
        out[key] = typeof av === 'number' && typeof bv === 'number' ? Math.min(av, bv) : bv;
        break;
      case 'enum': {
        const keep = new Set((bv as unknown[]).map(canonical));
        out.enum = (av as unknown[]).filter((v) => keep.has(canonical(v)));
        break;
      }
      case 'const':
        if (canonical(av) !== canonical(bv)) out.enum = [];
        break;
      default:
        if (canonical(av) !== canonical(bv) && !ANNOTATIONS.has(key)) {
          conflicts.push(key);
        }
    }
  }
  mergeArrays(a, b, out, conflicts);
  // A property one side declares and the other does not is an "additional" one for that other side.
  for (const [side, other] of [
    [a, b],
    [b, a],
  ] as const) {
    const extra = other.additionalProperties;
    if (extra === undefined || extra === true) continue;
    const own = isObject(side.properties) ? Object.keys(side.properties) : [];
    const theirs = isObject(other.properties) ? other.properties : {};
    const props = { ...(out.properties as Record<string, unknown>) };
    for (const name of own) if (!Object.hasOwn(theirs, name)) props[name] = both(props[name], extra);
    if (own.length > 0) out.properties = props;
    if (isObject(other.patternProperties) && own.length > 0) conflicts.push('patternProperties');
  }
  return { schema: out, conflicts };
}

/** One side's items as a prefix and the schema of every item after it (2020-12 or draft-04/07 forms). */
function arrayForm(schema: Record<string, unknown>): { prefix: unknown[]; rest: unknown } {
  if (Array.isArray(schema.prefixItems))
    return { prefix: schema.prefixItems as unknown[], rest: schema.items ?? true };
  if (Array.isArray(schema.items))
    return { prefix: schema.items as unknown[], rest: schema.additionalItems ?? true };
  return { prefix: [], rest: schema.items ?? true };
}

/** `items` applies after its own schema's prefixItems only: merged position by position. */
function mergeArrays(
  a: Record<string, unknown>,
  b: Record<string, unknown>,
  out: Record<string, unknown>,
  conflicts: string[],
): void {
  const keys = ['items', 'prefixItems', 'additionalItems'];
  if (!keys.some((k) => k in a) && !keys.some((k) => k in b)) return;
  void conflicts;
  const x = arrayForm(a);
  const y = arrayForm(b);
  const length = Math.max(x.prefix.length, y.prefix.length);
  const prefix: unknown[] = [];
  for (let i = 0; i < length; i++)
    prefix.push(both(i < x.prefix.length ? x.prefix[i] : x.rest, i < y.prefix.length ? y.prefix[i] : y.rest));
  for (const k of keys) delete out[k];
  if (length > 0) out.prefixItems = prefix;
  const rest = both(x.rest, y.rest);
  if (rest !== true) out.items = rest;
}
