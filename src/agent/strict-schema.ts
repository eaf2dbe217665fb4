import type { JsonSchema } from '../spec/index.ts';
import { isRecord } from '../spec/is-record.ts';
import { resolvePointer } from './json-pointer.ts';

// Strict variants of tool schemas (OpenAI structured outputs), and the way back for the arguments they produce.
/** OpenAI's documented limits for strict schemas; a schema beyond them would fail the whole request. */
const MAX_NESTING_DEPTH = 10;
const MAX_TOTAL_PROPERTIES = 5000;
const MAX_TOTAL_ENUM_VALUES = 1000;

/** The string formats OpenAI documents for strict mode; other formats are dropped (codecall still checks them). */
const STRICT_FORMATS = new Set([
  'date-time',
  'time',
  'date',
  'duration',
  'email',
  'hostname',
  'ipv4',
  'ipv6',
  'uuid',
]);

/** Constraints in OpenAI's strict subset, copied as they are. */
const KEPT_CONSTRAINTS = [
  'pattern',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minItems',
  'maxItems',
] as const;

/**
 * Keywords that change which shape the model must produce and that the subset cannot express: a schema using
 * any of them has no strict variant.
 */
const SHAPE_KEYWORDS = new Set([
  'if',
  'then',
  'else',
  'dependentSchemas',
  'dependencies',
  'patternProperties',
  'prefixItems',
  'additionalItems',
  '$dynamicRef',
  '$recursiveRef',
]);

/**
 * Keywords handled by `strictNode`; anything else (annotations such as `default`, `examples`, `$schema`, `$id`,
 * `$comment`, and constraints outside the subset such as `minLength`, `maxLength`, `uniqueItems`, `not`,
 * `propertyNames`, `minProperties`, `dependentRequired`) is dropped. Dropping only ever loosens the schema, and
 * the arguments are still validated against the original one.
 */
const HANDLED_KEYWORDS = new Set([
  'type',
  'enum',
  'const',
  'properties',
  'required',
  'additionalProperties',
  'unevaluatedProperties',
  'items',
  'anyOf',
  'oneOf',
  'allOf',
  '$ref',
  '$defs',
  'definitions',
  'format',
  'title',
  'description',
  ...KEPT_CONSTRAINTS,
]);

class NotStrict extends Error {}

function refuse(): never {
  throw new NotStrict();
}

interface StrictContext {
  readonly root: JsonSchema;
  properties: number;
  enumValues: number;
  /** `$ref`s being inlined (a `$ref` with a description next to it), to stop at recursion. */
  readonly inlining: Set<string>;
}

/**
 * A `strict`-compatible variant of a JSON Schema (OpenAI structured outputs rules): every object gets
 * `additionalProperties: false` and all its properties listed in `required`, optional properties become
 * nullable (`type: [T, 'null']` or anyOf with null), unsupported keywords removed, `$ref`s kept with `$defs`.
 * Returns null when the schema cannot be made strict, so the caller sends that tool non-strict.
 *
 * - The root must be `type: 'object'` (no root `anyOf` or `$ref`).
 * - Kept: `type`, `enum`, `properties`, `items`, `anyOf`, `$ref` (`#`, `#/$defs/<name>`, `#/definitions/<name>`)
 *   with root `$defs`/`definitions`, `title`, `description`, `pattern`, the documented `format`s, `minimum`,
 *   `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`, `minItems`, `maxItems`.
 * - Rewritten: `const` becomes a one-value `enum`; `oneOf` becomes `anyOf`; an `allOf` of one schema is inlined;
 *   a missing `type` is inferred from `enum`, `properties` or `items`; a `$ref` with a `title` or `description`
 *   next to it is inlined (OpenAI does not allow siblings of `$ref`).
 * - Dropped (they only loosen; codecall validates against the original schema): annotations (`default`,
 *   `examples`, `$schema`, `$comment`, ...), `minLength`, `maxLength`, other formats, `uniqueItems`, `contains`,
 *   `minProperties`, `maxProperties`, `propertyNames`, `not`, `dependentRequired`, unknown keywords.
 * - Refused (null): free-form objects (no `properties`, or `additionalProperties` that is `true` or a schema),
 *   `required` naming an undeclared property, arrays without an `items` schema, untyped schemas (`{}`, `true`),
 *   `false` schemas, `allOf` of several schemas, `if`/`then`/`else`, `dependentSchemas`, `patternProperties`,
 *   tuples, other `$ref`s, `$defs` below the root, `enum`s of objects, and schemas beyond OpenAI's limits
 *   (10 levels of nesting, 5000 properties, 1000 enum values).
 *
 * An optional property that already accepts null stays as it is; either way a null from the model means "not
 * given" (see `fromStrictArguments`).
 */
export function strictSchema(schema: JsonSchema): JsonSchema | null {
  const ctx: StrictContext = { root: schema, properties: 0, enumValues: 0, inlining: new Set() };
  try {
    if (!isRecord(schema) || schema.type !== 'object' || 'anyOf' in schema || 'oneOf' in schema) refuse();
    if ('$ref' in schema || 'allOf' in schema) refuse();
    const { $defs, definitions, ...body } = schema;
    const out = strictNode(body, ctx, 1);
    if ($defs !== undefined) out.$defs = strictDefinitions($defs, ctx);
    if (definitions !== undefined) out.definitions = strictDefinitions(definitions, ctx);
    if (ctx.properties > MAX_TOTAL_PROPERTIES || ctx.enumValues > MAX_TOTAL_ENUM_VALUES) refuse();
    return out;
  } catch (error) {
    if (error instanceof NotStrict) return null;
    throw error;
  }
}

function strictDefinitions(defs: unknown, ctx: StrictContext): JsonSchema {
  if (!isRecord(defs)) refuse();
  const out: JsonSchema = {};
  for (const [name, def] of Object.entries(defs)) out[name] = strictNode(def, ctx, 1);
  return out;
}

function strictNode(schema: unknown, ctx: StrictContext, depth: number): JsonSchema {
  if (!isRecord(schema)) refuse();
  if (depth > MAX_NESTING_DEPTH) refuse();
  if ('$defs' in schema || 'definitions' in schema) refuse();
  for (const key of Object.keys(schema)) if (SHAPE_KEYWORDS.has(key)) refuse();

  if ('$ref' in schema) return strictRef(schema, ctx, depth);
  if ('allOf' in schema) {
    const { allOf, ...rest } = schema;
    if (!Array.isArray(allOf) || allOf.length !== 1 || !onlyAnnotations(rest)) refuse();
    return strictNode(withAnnotations(allOf[0], rest), ctx, depth);
  }

  const out: JsonSchema = {};
  copyAnnotations(schema, out);

  const union = schema.anyOf ?? schema.oneOf;
  if (union !== undefined) {
    if ('anyOf' in schema && 'oneOf' in schema) refuse();
    if (!Array.isArray(union) || union.length === 0) refuse();
    // Next to a union, anything but annotations would intersect with it, which the subset cannot say.
    const { anyOf: _anyOf, oneOf: _oneOf, ...rest } = schema;
    if (!onlyAnnotations(rest)) refuse();
    out.anyOf = union.map((branch) => strictNode(branch, ctx, depth));
    return out;
  }

  const values = enumValues(schema);
  const types = schemaTypes(schema, values);
  out.type = types.length === 1 ? types[0] : types;
  if (values !== undefined) {
    out.enum = values;
    ctx.enumValues += values.length;
  }

  if (types.includes('object')) {
    const properties = schema.properties;
    const closed = schema.additionalProperties === false || schema.unevaluatedProperties === false;
    if (schema.additionalProperties !== undefined && schema.additionalProperties !== false) refuse();
    if (schema.unevaluatedProperties !== undefined && schema.unevaluatedProperties !== false) refuse();
    if (properties !== undefined && !isRecord(properties)) refuse();
    if (properties === undefined && !closed) refuse();
    const declared = properties ?? {};
    const required = schema.required ?? [];
    if (!Array.isArray(required)) refuse();
    for (const name of required) if (typeof name !== 'string' || !Object.hasOwn(declared, name)) refuse();
    const strictProperties: JsonSchema = {};
    for (const [name, child] of Object.entries(declared)) {
      const strictChild = strictNode(child, ctx, depth + 1);
      strictProperties[name] = required.includes(name) ? strictChild : nullable(strictChild);
    }
    ctx.properties += Object.keys(declared).length;
    out.properties = strictProperties;
    out.required = Object.keys(declared);
    out.additionalProperties = false;
  }

  if (types.includes('array')) {
    if (!isRecord(schema.items)) refuse();
    out.items = strictNode(schema.items, ctx, depth + 1);
  }

  if (typeof schema.format === 'string' && STRICT_FORMATS.has(schema.format)) out.format = schema.format;
  for (const key of KEPT_CONSTRAINTS) {
    const value = schema[key];
    if (key === 'pattern' ? typeof value === 'string' : typeof value === 'number') out[key] = value;
  }
  return out;
}

const STRICT_REF = /^#(?:\/(?:\$defs|definitions)\/[^/]+)?$/;

function strictRef(schema: JsonSchema, ctx: StrictContext, depth: number): JsonSchema {
  const { $ref: ref, ...rest } = schema;
  if (typeof ref !== 'string' || !STRICT_REF.test(ref) || !onlyAnnotations(rest)) refuse();
  const target = resolvePointer(ctx.root, ref);
  if (target === undefined) refuse();
  const described = typeof rest.title === 'string' || typeof rest.description === 'string';
  if (!described || ref === '#' || ctx.inlining.has(ref)) return { $ref: ref };
  ctx.inlining.add(ref);
  try {
    return strictNode(withAnnotations(target, rest), ctx, depth);
  } finally {
    ctx.inlining.delete(ref);
  }
}

/** Whether `schema` holds nothing but a title, a description and keywords that are dropped anyway. */
function onlyAnnotations(schema: JsonSchema): boolean {
  return Object.keys(schema).every(
    (key) => key === 'title' || key === 'description' || !HANDLED_KEYWORDS.has(key),
  );
}

function copyAnnotations(from: JsonSchema, to: JsonSchema): void {
  if (typeof from.title === 'string') to.title = from.title;
  if (typeof from.description === 'string') to.description = from.description;
}

/** `schema` with the outer title and description, which win over its own (before it is made strict). */
function withAnnotations(schema: unknown, outer: JsonSchema): unknown {
  if (!isRecord(schema)) return schema;
  const annotations: JsonSchema = {};
  copyAnnotations(outer, annotations);
  return { ...annotations, ...schema, ...annotations };
}

function enumValues(schema: JsonSchema): unknown[] | undefined {
  let values: unknown[] | undefined;
  if ('enum' in schema) {
    if (!Array.isArray(schema.enum) || schema.enum.length === 0) refuse();
    values = schema.enum;
  }
  if ('const' in schema) {
    values = values === undefined ? [schema.const] : values.filter((v) => v === schema.const);
    if (values.length === 0) refuse();
  }
  if (values?.some((v) => typeof v === 'object' && v !== null)) refuse();
  return values;
}

const JSON_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'object', 'array', 'null']);

function schemaTypes(schema: JsonSchema, values: unknown[] | undefined): string[] {
  const declared = schema.type;
  if (typeof declared === 'string') {
    if (!JSON_TYPES.has(declared)) refuse();
    return [declared];
  }
  if (Array.isArray(declared)) {
    if (declared.length === 0 || declared.some((t) => typeof t !== 'string' || !JSON_TYPES.has(t))) refuse();
    return [...new Set(declared as string[])];
  }
  if (declared !== undefined) refuse();
  if (values !== undefined) {
    return [
      ...new Set(values.map((v) => (v === null ? 'null' : typeof v === 'number' ? 'number' : typeof v))),
    ];
  }
  if ('properties' in schema || schema.additionalProperties === false) return ['object'];
  if ('items' in schema) return ['array'];
  return refuse();
}

/** Makes an optional property's strict schema accept null, its stand-in for "not given". */
function nullable(schema: JsonSchema): JsonSchema {
  if (acceptsNull(schema)) return schema;
  const { type } = schema;
  const types = typeof type === 'string' ? [type] : Array.isArray(type) ? (type as string[]) : undefined;
  if (types !== undefined && !types.includes('object') && !types.includes('array')) {
    const out: JsonSchema = { ...schema, type: [...types, 'null'] };
    if (Array.isArray(schema.enum)) out.enum = [...(schema.enum as unknown[]), null];
    return out;
  }
  if (Array.isArray(schema.anyOf))
    return { ...schema, anyOf: [...(schema.anyOf as unknown[]), { type: 'null' }] };
  const { title, description, ...rest } = schema;
  const out: JsonSchema = {};
  if (title !== undefined) out.title = title;
  if (description !== undefined) out.description = description;
  out.anyOf = [rest, { type: 'null' }];
  return out;
}

/** Whether a strict schema (as `strictNode` builds them) accepts null; a `$ref` is assumed not to. */
function acceptsNull(schema: JsonSchema): boolean {
  if (Array.isArray(schema.anyOf))
    return schema.anyOf.some((branch) => isRecord(branch) && acceptsNull(branch));
  const { type } = schema;
  const typeAllows = type === 'null' || (Array.isArray(type) && type.includes('null'));
  return typeAllows && (!Array.isArray(schema.enum) || schema.enum.includes(null));
}
