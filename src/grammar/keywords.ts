/** What the schema compiler does with each JSON Schema keyword. */

/** Keywords that say nothing about which values are valid (or only point at others). */
export const ANNOTATIONS = new Set([
  '$schema',
  '$id',
  'id',
  '$comment',
  '$anchor',
  '$dynamicAnchor',
  '$vocabulary',
  '$defs',
  'definitions',
  'title',
  'description',
  'default',
  'examples',
  'example',
  'deprecated',
  'readOnly',
  'writeOnly',
  'contentMediaType',
  'contentEncoding',
  'contentSchema',
  'discriminator',
  'nullable',
  'markdownDescription',
]);

/**
 * Internal: property names an object must not have (what `not: { required: [name] }` becomes); never in a user's
 * schema with a meaning of its own, as `$` names are reserved for the specification.
 */
export const FORBIDDEN = '$codecall:forbidden';

/** Keywords the grammar enforces (some only in part: the compiler reports the rest). */
export const ENFORCED = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'patternProperties',
  'items',
  'prefixItems',
  'additionalItems',
  'minItems',
  'maxItems',
  'enum',
  'const',
  'anyOf',
  'oneOf',
  'allOf',
  '$ref',
  'pattern',
  'format',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'not',
  'dependentRequired',
  'dependentSchemas',
  'dependencies',
  FORBIDDEN,
]);

/** Keywords with a meaning for validity that the grammar does not enforce: always reported. */
export const UNSUPPORTED = new Set([
  'if',
  'then',
  'else',
  'minProperties',
  'maxProperties',
  'uniqueItems',
  'contains',
  'minContains',
  'maxContains',
  'unevaluatedProperties',
  'unevaluatedItems',
  'propertyNames',
  'multipleOf',
  '$dynamicRef',
  '$recursiveRef',
  '$recursiveAnchor',
]);

export const TYPES = ['null', 'boolean', 'object', 'array', 'string', 'number', 'integer'] as const;
export type JsonType = (typeof TYPES)[number];
