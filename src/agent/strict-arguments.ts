import type { JsonSchema } from '../spec/index.ts';
import { isRecord } from '../spec/is-record.ts';
import { resolvePointer } from './json-pointer.ts';

// Arguments of strict calls: what a tool declared, back from the strict variant the model was given.

/**
 * Undoes the strict variant's stand-in for optional properties: returns `args` without the properties whose value
 * is null and that `schema` (the original, not the strict variant) does not list in `required`, at every level
 * (nested objects, array items, `anyOf`/`oneOf` branches, local `$ref`s), so the tool sees what it declared.
 * A null for a required property is kept, and so is anything the schema does not describe. `args` is not changed.
 *
 * For a union, the branch is the first object branch whose declared properties hold every key of the value and
 * whose `const`/`enum` properties match it; a strict model sends exactly one branch's keys, so this is that
 * branch unless two branches declare the same keys and values.
 */
export function fromStrictArguments(
  schema: JsonSchema,
  args: Record<string, unknown>,
): Record<string, unknown> {
  const cleaned = cleanValue(schema, args, schema);
  return isRecord(cleaned) ? cleaned : args;
}

const MAX_REF_HOPS = 32;

/** Follows `$ref`s and single-entry `allOf`s to the schema that says what a value looks like. */
function effectiveSchema(schema: unknown, root: JsonSchema): JsonSchema | undefined {
  let current = schema;
  for (let hops = 0; hops < MAX_REF_HOPS; hops++) {
    if (!isRecord(current)) return undefined;
    if (typeof current.$ref === 'string') {
      current = resolvePointer(root, current.$ref);
      continue;
    }
    if (Array.isArray(current.allOf) && current.allOf.length === 1 && !('properties' in current)) {
      current = current.allOf[0];
      continue;
    }
    return current;
  }
  return undefined;
}

function cleanValue(schema: unknown, value: unknown, root: JsonSchema): unknown {
  if (typeof value !== 'object' || value === null) return value;
  const s = effectiveSchema(schema, root);
  if (s === undefined) return value;
  if (Array.isArray(value)) {
    const items = isRecord(s.items) ? s.items : pickBranch(s, value, root);
    return items === undefined ? value : value.map((item) => cleanValue(items, item, root));
  }
  const record = value as Record<string, unknown>;
  if (!isRecord(s.properties)) {
    const branch = pickBranch(s, record, root);
    return branch === undefined ? value : cleanValue(branch, record, root);
  }
  const properties = s.properties;
  const required = Array.isArray(s.required) ? (s.required as unknown[]) : [];
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(record)) {
    const declared = Object.hasOwn(properties, key);
    if (item === null && declared && !required.includes(key)) continue;
    // defineProperty, not assignment: a `__proto__` key must stay an own property, as JSON.parse makes it.
    Object.defineProperty(out, key, {
      value: declared ? cleanValue(properties[key], item, root) : item,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

function pickBranch(schema: JsonSchema, value: object, root: JsonSchema): JsonSchema | undefined {
  const union = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : [];
  const branches = union
    .map((branch) => effectiveSchema(branch, root))
    .filter((branch): branch is JsonSchema => branch !== undefined);
  if (Array.isArray(value)) return branches.find((b) => hasType(b, 'array') || isRecord(b.items));
  const objects = branches.filter((b) => hasType(b, 'object') || isRecord(b.properties));
  const record = value as Record<string, unknown>;
  return objects.find((b) => fitsBranch(b, record, root)) ?? objects[0];
}

function hasType(schema: JsonSchema, type: string): boolean {
  return schema.type === type || (Array.isArray(schema.type) && schema.type.includes(type));
}

function fitsBranch(branch: JsonSchema, value: Record<string, unknown>, root: JsonSchema): boolean {
  const properties = isRecord(branch.properties) ? branch.properties : {};
  for (const [key, item] of Object.entries(value)) {
    if (!Object.hasOwn(properties, key)) return false;
    const property = effectiveSchema(properties[key], root);
    if (property === undefined || item === null) continue;
    if ('const' in property && property.const !== item) return false;
    if (Array.isArray(property.enum) && !property.enum.includes(item)) return false;
  }
  return true;
}
