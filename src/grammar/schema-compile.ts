/**
 * One schema (boolean or object) as a grammar expression: $ref, allOf/anyOf/oneOf and enum/const here, each
 * JSON type's keywords in schema-types.ts, schema-object.ts and schema-array.ts. Every keyword that constrains
 * values and is not enforced is reported (never silently dropped).
 */
import { CodecallError } from '../errors/index.ts';
import type { CompileContext } from './compile-context.ts';
import { alt, lit, NOTHING, seq } from './ir.ts';
import type { Expr } from './ir.ts';
import { ENFORCED, FORBIDDEN, TYPES, UNSUPPORTED } from './keywords.ts';
import type { JsonType } from './keywords.ts';
import { mergeSchemas } from './merge.ts';
import { pointerJoin } from './report.ts';
import { compileArray } from './schema-array.ts';
import { compileObject } from './schema-object.ts';
import { compileInteger, compileNumber, compileString } from './schema-types.ts';
import { oneOfDisjoint } from './disjoint.ts';
import { dependenciesAsClauses, DEPENDENCY_KEYWORDS } from './dependencies.ts';

export type SchemaObject = Record<string, unknown>;

export function isObject(value: unknown): value is SchemaObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Keywords that do nothing in these forms. */
function isNoOp(key: string, value: unknown, schema: SchemaObject): boolean {
  return (
    (key === 'multipleOf' &&
      schema.type === 'integer' &&
      typeof value === 'number' &&
      Number.isInteger(1 / value)) ||
    (key === 'uniqueItems' && value === false) ||
    (key === 'minProperties' && value === 0) ||
    ((key === 'minContains' || key === 'maxContains') && value !== undefined)
  );
}

function constraintKeys(schema: SchemaObject): string[] {
  return Object.keys(schema).filter((key) => ENFORCED.has(key) || UNSUPPORTED.has(key));
}

function without(schema: SchemaObject, ...keys: string[]): SchemaObject {
  const out = { ...schema };
  for (const key of keys) delete out[key];
  return out;
}

export function compileSchema(ctx: CompileContext, schema: unknown, path: string): Expr {
  if (schema === true) return ctx.anyValue;
  if (schema === false) return NOTHING;
  if (!isObject(schema)) {
    throw new CodecallError('GRAMMAR_INVALID_SCHEMA', `the schema at ${path} is not an object or a boolean`, {
      details: { path },
    });
  }
  ctx.enter(path);
  // A schema of the document is read against its own base (its $id or its resource's); a merged one, its parent's.
  const base = ctx.index.baseOf(schema);
  if (base !== undefined) ctx.bases.push(base);
  try {
    return compileObjectSchema(ctx, schema, path);
  } finally {
    if (base !== undefined) ctx.bases.pop();
    ctx.leave();
  }
}

function resolveTop(ctx: CompileContext, schema: unknown, path: string): unknown {
  // A member that is only a $ref is looked up (for merging); one with siblings is merged as it is.
  for (let i = 0; i < 50 && isObject(schema) && typeof schema.$ref === 'string'; i++) {
    const target = ctx.resolve(schema.$ref);
    if (target === undefined) return schema;
    const rest = without(schema, '$ref');
    schema =
      constraintKeys(rest).length === 0 ? target.schema : mergeSchemas(target.schema as never, rest).schema;
  }
  void path;
  return schema;
}

function mergeAll(ctx: CompileContext, members: unknown[], path: string): unknown {
  let merged: unknown = true;
  for (const member of members) {
    const result = mergeSchemas(merged as never, resolveTop(ctx, member, path) as never);
    for (const keyword of result.conflicts) ctx.report(keyword, path, 'allOf members set it differently');
    merged = result.schema;
  }
  return merged;
}

const DIALECTS = /^https?:\/\/json-schema\.org\/(draft-0[3467]\/schema|draft\/(2019-09|2020-12)\/schema)#?$/;

function compileObjectSchema(ctx: CompileContext, schema: SchemaObject, path: string): Expr {
  if (typeof schema.$schema === 'string' && !DIALECTS.test(schema.$schema)) {
    ctx.report('$schema', path, `an unknown dialect ${schema.$schema}`);
  }
  for (const [key, value] of Object.entries(schema)) {
    if (UNSUPPORTED.has(key) && !isNoOp(key, value, schema))
      ctx.report(key, path, 'not enforced by the grammar');
  }
  if (DEPENDENCY_KEYWORDS.some((key) => Object.hasOwn(schema, key))) {
    const clauses = dependenciesAsClauses(schema);
    if (clauses !== undefined) return compileSchema(ctx, clauses, path);
    for (const key of DEPENDENCY_KEYWORDS) {
      if (Object.hasOwn(schema, key)) ctx.report(key, path, 'more dependencies than the grammar unfolds');
    }
    return compileSchema(ctx, without(schema, ...DEPENDENCY_KEYWORDS), path);
  }
  if (Object.hasOwn(schema, 'not')) return compileSchema(ctx, withoutNot(ctx, schema, path), path);
  if (typeof schema.$ref === 'string') {
    const target = ctx.resolve(schema.$ref);
    if (target === undefined) {
      ctx.report('$ref', path, `cannot resolve ${schema.$ref}`);
      return compileSchema(ctx, without(schema, '$ref'), path);
    }
    const rest = without(schema, '$ref');
    if (constraintKeys(rest).length > 0)
      return compileSchema(ctx, mergeAll(ctx, [target.schema, rest], path), path);
    let name = ctx.refRules.get(target.pointer);
    if (name === undefined) {
      name = ctx.name(target.pointer.split('/').pop() ?? 'ref');
      ctx.refRules.set(target.pointer, name);
      ctx.rules.set(name, NOTHING);
      ctx.rules.set(name, compileSchema(ctx, target.schema, target.pointer));
    }
    return { k: 'ref', name };
  }
  // Alternatives first: each branch then merges the allOf members, one anyOf at a time (the other way round, an
  // allOf member's anyOf and the schema's own would trade places forever).
  for (const key of ['anyOf', 'oneOf'] as const) {
    const branches = schema[key];
    if (!Array.isArray(branches)) continue;
    const rest = without(schema, key);
    if (key === 'oneOf' && !oneOfDisjoint(ctx, branches, rest)) {
      ctx.report('oneOf', path, 'branches may overlap: enforced as anyOf');
    }
    const hasRest = constraintKeys(rest).length > 0;
    return alt(
      ...branches.map((branch, i) => {
        const at = pointerJoin(path, key, i);
        return hasRest
          ? compileSchema(ctx, mergeAll(ctx, [rest, branch], at), at)
          : compileSchema(ctx, branch, at);
      }),
    );
  }
  if (Array.isArray(schema.allOf)) {
    const merged = mergeAll(
      ctx,
      [without(schema, 'allOf'), ...(schema.allOf as unknown[])],
      pointerJoin(path, 'allOf'),
    );
    return compileSchema(ctx, merged, path);
  }
  if (schema.enum !== undefined || Object.hasOwn(schema, 'const')) return compileEnum(ctx, schema, path);
  const declared = typeList(schema.type);
  const types = declared ?? [...TYPES];
  const wanted = new Set(types.includes('number') ? types.filter((t) => t !== 'integer') : types);
  const parts: Expr[] = [];
  for (const type of TYPES) if (wanted.has(type)) parts.push(compileType(ctx, type, schema, path));
  return alt(...parts);
}

function typeList(type: unknown): JsonType[] | undefined {
  if (typeof type === 'string') return [type as JsonType];
  return Array.isArray(type) ? (type as JsonType[]) : undefined;
}

function compileType(ctx: CompileContext, type: JsonType, schema: SchemaObject, path: string): Expr {
  switch (type) {
    case 'null':
      return lit('null');
    case 'boolean':
      return alt(lit('true'), lit('false'));
    case 'string':
      return compileString(ctx, schema, path);
    case 'number':
      return compileNumber(ctx, schema, path, false);
    case 'integer':
      return compileInteger(ctx, schema, path);
    case 'object':
      return compileObject(ctx, schema, path);
    case 'array':
      return compileArray(ctx, schema, path);
    default:
      throw new CodecallError('GRAMMAR_INVALID_SCHEMA', `unknown type ${String(type)} at ${path}`, {
        details: { path },
      });
  }
}

export function typeOf(value: unknown): JsonType {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value as JsonType;
}

/** A JSON value as the grammar of exactly it (members in its own order, whitespace by policy). */
export function valueLiteral(ctx: CompileContext, value: unknown): Expr {
  if (Array.isArray(value)) {
    if (value.length === 0) return seq(lit('['), ctx.ws, lit(']'));
    const items = value.map((item, i) =>
      i === 0 ? valueLiteral(ctx, item) : seq(ctx.comma, valueLiteral(ctx, item)),
    );
    return seq(lit('['), ctx.ws, ...items, ctx.ws, lit(']'));
  }
  if (isObject(value)) {
    const entries = Object.entries(value);
    if (entries.length === 0) return seq(lit('{'), ctx.ws, lit('}'));
    const members = entries.map(([k, v], i) =>
      seq(
        i === 0 ? lit('') : ctx.comma,
        lit(JSON.stringify(k)),
        ctx.ws,
        lit(':'),
        ctx.ws,
        valueLiteral(ctx, v),
      ),
    );
    return seq(lit('{'), ctx.ws, ...members, ctx.ws, lit('}'));
  }
  return lit(JSON.stringify(value));
}

function compileEnum(ctx: CompileContext, schema: SchemaObject, path: string): Expr {
  let values: unknown[] = Array.isArray(schema.enum) ? schema.enum : [];
  if (Object.hasOwn(schema, 'const')) {
    const key = JSON.stringify(schema.const);
    values = schema.enum === undefined ? [schema.const] : values.filter((v) => JSON.stringify(v) === key);
  }
  const types = typeList(schema.type);
  if (types !== undefined) {
    values = values.filter((v) => {
      const t = typeOf(v);
      return types.includes(t) || (t === 'integer' && types.includes('number'));
    });
  }
  for (const key of constraintKeys(schema)) {
    if (!['type', 'enum', 'const'].includes(key) && ENFORCED.has(key)) {
      ctx.report(key, path, 'not checked against the enum/const values');
    }
  }
  return alt(...values.map((v) => valueLiteral(ctx, v)));
}

/**
 * `not` as the schema it leaves: `not: {}` allows nothing, `not: false` is no constraint, `not: { type }` takes types
 * away, `not: { required: [a, b] }` is "a or b is missing" (an object; any other value has every property it
 * requires, so it fails `not`). Any other `not` is reported and left out.
 */
function withoutNot(ctx: CompileContext, schema: SchemaObject, path: string): unknown {
  const rest = without(schema, 'not');
  const negated = resolveTop(ctx, schema.not, path);
  if (negated === false) return rest;
  if (negated === true) return false;
  if (!isObject(negated)) {
    ctx.report('not', path, 'not a schema');
    return rest;
  }
  const keys = constraintKeys(negated);
  if (keys.length === 0) return false;
  if (keys.length === 1 && keys[0] === 'type') {
    const out = typeList(negated.type) ?? [];
    const current = typeList(rest.type) ?? [...TYPES];
    if (out.includes('integer') && !out.includes('number') && current.includes('number')) {
      ctx.report('not', path, 'a number that is not an integer');
      return rest;
    }
    const left = current.filter((t) => !out.includes(t) && !(t === 'integer' && out.includes('number')));
    return { ...rest, type: left };
  }
  if (keys.length === 1 && keys[0] === 'required' && Array.isArray(negated.required)) {
    const names = negated.required as string[];
    if (names.length === 0) return false;
    return mergeAll(
      ctx,
      [rest, { anyOf: names.map((name) => ({ type: 'object', [FORBIDDEN]: [name] })) }],
      path,
    );
  }
  ctx.report('not', path, 'only not {}, not { type } and not { required } are enforced');
  return rest;
}
