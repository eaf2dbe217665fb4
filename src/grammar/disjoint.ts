/**
 * oneOf is exactly anyOf when no value can match two branches. Shown here two ways: the branches' types do not
 * overlap, or every branch requires one property whose const/enum values differ from every other branch's.
 */
import type { CompileContext } from './compile-context.ts';

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function resolved(ctx: CompileContext, schema: unknown): unknown {
  for (let i = 0; i < 20 && isObject(schema) && typeof schema.$ref === 'string'; i++) {
    schema = ctx.resolve(schema.$ref)?.schema;
  }
  return schema;
}

function typeSet(schema: unknown): Set<string> | undefined {
  if (!isObject(schema)) return undefined;
  const out = new Set<string>();
  const values = Array.isArray(schema.enum)
    ? schema.enum
    : Object.hasOwn(schema, 'const')
      ? [schema.const]
      : undefined;
  if (values !== undefined) {
    for (const v of values)
      out.add(v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'number' ? 'number' : typeof v);
    return out;
  }
  const t = schema.type;
  const list = typeof t === 'string' ? [t] : Array.isArray(t) ? (t as string[]) : undefined;
  if (list === undefined) return undefined;
  for (const name of list) out.add(name === 'integer' ? 'number' : name);
  return out;
}

function tagValues(schema: unknown, name: string): Set<string> | undefined {
  if (!isObject(schema) || !Array.isArray(schema.required) || !schema.required.includes(name))
    return undefined;
  const props = isObject(schema.properties) ? schema.properties : {};
  const prop = props[name];
  if (!isObject(prop)) return undefined;
  if (Object.hasOwn(prop, 'const')) return new Set([JSON.stringify(prop.const)]);
  if (Array.isArray(prop.enum)) return new Set(prop.enum.map((v) => JSON.stringify(v)));
  return undefined;
}

function pairwiseDisjoint(sets: Set<string>[]): boolean {
  const seen = new Set<string>();
  for (const set of sets) {
    for (const item of set) if (seen.has(item)) return false;
    for (const item of set) seen.add(item);
  }
  return true;
}

/** The values a branch allows when it is an enum or a const. */
function literals(schema: unknown): Set<string> | undefined {
  if (!isObject(schema)) return undefined;
  if (Object.hasOwn(schema, 'const')) return new Set([JSON.stringify(schema.const)]);
  return Array.isArray(schema.enum) ? new Set(schema.enum.map((v) => JSON.stringify(v))) : undefined;
}

export function oneOfDisjoint(ctx: CompileContext, branches: unknown[], rest: Obj): boolean {
  const schemas = branches.map((b) => resolved(ctx, b));
  const values = schemas.map(literals);
  if (values.every((v) => v !== undefined) && pairwiseDisjoint(values)) return true;
  const restTypes = typeSet(rest);
  const types = schemas.map((s) => typeSet(s) ?? restTypes);
  if (types.every((t) => t !== undefined) && pairwiseDisjoint(types)) return true;
  const first = schemas[0];
  if (!isObject(first) || !Array.isArray(first.required)) return schemas.length <= 1;
  for (const name of first.required as string[]) {
    const tags = schemas.map((s) => tagValues(s, name));
    if (tags.every((t) => t !== undefined) && pairwiseDisjoint(tags)) return true;
  }
  return schemas.length <= 1;
}
