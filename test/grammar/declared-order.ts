/**
 * The grammar writes an object's properties in declared order, then the additional ones. JSON Schema does not
 * care about key order, so the test data's instances come in any order: before feeding one to the matcher, its
 * keys are put in the schema's declared order, then the others in their own order. Where anyOf/oneOf branches
 * declare different orders, each branch's order is a candidate (a valid instance must match in one of them; an
 * invalid one in none, since reordering keys never changes validity).
 */
import { dependenciesAsClauses } from '../../src/grammar/dependencies.ts';
import { mergeSchemas } from '../../src/grammar/merge.ts';
import { resolveRef } from '../../src/grammar/refs.ts';

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const MAX_CANDIDATES = 16;

function flatten(root: unknown, schema: unknown, depth = 0): unknown[] {
  if (depth > 20 || !isObject(schema)) return [schema];
  // Dependencies become anyOf clauses in the grammar (dependencies.ts): their orders too.
  const clauses = dependenciesAsClauses(schema);
  if (clauses !== undefined) return flatten(root, clauses, depth + 1);
  if (typeof schema.$ref === 'string') {
    const target = resolveRef(root, schema.$ref);
    const rest = { ...schema };
    delete rest.$ref;
    if (target === undefined) return flatten(root, rest, depth + 1);
    return flatten(root, mergeSchemas(target.schema as never, rest).schema, depth + 1);
  }
  if (Array.isArray(schema.allOf)) {
    const rest: Obj = { ...schema };
    delete rest.allOf;
    // Every combination of the members' alternatives (at most MAX_CANDIDATES).
    let merged: unknown[] = [rest];
    for (const member of schema.allOf as unknown[]) {
      const options = flatten(root, member, depth + 1);
      merged = merged
        .flatMap((m) => options.map((o) => mergeSchemas(m as never, o as never).schema))
        .slice(0, MAX_CANDIDATES);
    }
    return merged.flatMap((m) => flatten(root, m, depth + 1)).slice(0, MAX_CANDIDATES);
  }
  for (const key of ['anyOf', 'oneOf']) {
    const branches = schema[key];
    if (!Array.isArray(branches)) continue;
    const rest = { ...schema };
    delete rest[key];
    return branches.flatMap((b) => flatten(root, mergeSchemas(rest as never, b as never).schema, depth + 1));
  }
  return [schema];
}

function product(lists: unknown[][]): unknown[][] {
  let out: unknown[][] = [[]];
  for (const list of lists) {
    out = out.flatMap((prefix) => list.map((item) => [...prefix, item])).slice(0, MAX_CANDIDATES);
  }
  return out;
}

/** Candidate orderings of `value` for `schema` (at most 16). */
export function declaredOrderCandidates(root: unknown, schema: unknown, value: unknown): unknown[] {
  const schemas = flatten(root, schema).slice(0, MAX_CANDIDATES);
  const out = new Map<string, unknown>();
  for (const s of schemas) {
    for (const candidate of reorderOne(root, s, value)) out.set(JSON.stringify(candidate), candidate);
  }
  if (out.size === 0) out.set(JSON.stringify(value), value);
  return [...out.values()].slice(0, MAX_CANDIDATES);
}

function reorderOne(root: unknown, schema: unknown, value: unknown): unknown[] {
  const s = isObject(schema) ? schema : {};
  if (Array.isArray(value)) {
    const prefix = Array.isArray(s.prefixItems) ? s.prefixItems : Array.isArray(s.items) ? s.items : [];
    const rest = Array.isArray(s.items) ? s.additionalItems : s.items;
    const lists = value.map((item, i) =>
      declaredOrderCandidates(root, i < prefix.length ? prefix[i] : (rest ?? true), item),
    );
    return product(lists);
  }
  if (!isObject(value)) return [value];
  // A const/enum object is written in its own key order.
  const literals: unknown[] = [
    ...(Object.hasOwn(s, 'const') ? [s.const] : []),
    ...(Array.isArray(s.enum) ? (s.enum as unknown[]) : []),
  ];
  const sameKeys = literals.find(
    (l): l is Obj =>
      isObject(l) &&
      Object.keys(l).length === Object.keys(value).length &&
      Object.keys(l).every((k) => Object.hasOwn(value, k)),
  );
  if (sameKeys !== undefined) return [Object.fromEntries(Object.keys(sameKeys).map((k) => [k, value[k]]))];
  const props = isObject(s.properties) ? s.properties : {};
  const required = Array.isArray(s.required) ? (s.required as string[]) : [];
  const order = [...Object.keys(props), ...required.filter((name) => !Object.hasOwn(props, name))];
  const keys = [
    ...order.filter((k) => Object.hasOwn(value, k)),
    ...Object.keys(value).filter((k) => !order.includes(k)),
  ];
  const patterns = isObject(s.patternProperties) ? Object.entries(s.patternProperties) : [];
  const lists = keys.map((k) => {
    const pattern = patterns.find(([p]) => new RegExp(p, 'u').test(k));
    const sub = Object.hasOwn(props, k)
      ? props[k]
      : pattern !== undefined
        ? pattern[1]
        : (s.additionalProperties ?? true);
    return declaredOrderCandidates(root, sub, value[k]);
  });
  return product(lists).map((vals) => Object.fromEntries(keys.map((k, i) => [k, vals[i]])));
}
