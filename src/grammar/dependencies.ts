/**
 * dependentRequired / dependentSchemas (and draft-07's `dependencies`, either form) as anyOf clauses the grammar
 * holds: for a name `a`, an object without `a`, or one with `a` and what it brings, or not an object at all (the
 * keywords say nothing about other values). Each dependency doubles the object's grammar, so more than
 * MAX_DEPENDENCIES are reported instead.
 */
import { FORBIDDEN } from './keywords.ts';

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export const DEPENDENCY_KEYWORDS = ['dependentRequired', 'dependentSchemas', 'dependencies'] as const;
const MAX_DEPENDENCIES = 3;
const NOT_OBJECTS = ['null', 'boolean', 'number', 'string', 'array'];

/** The schema with its dependencies as allOf clauses; undefined when it has none or too many. */
export function dependenciesAsClauses(schema: Obj): Obj | undefined {
  const deps: [string, unknown][] = [];
  for (const key of DEPENDENCY_KEYWORDS) if (isObject(schema[key])) deps.push(...Object.entries(schema[key]));
  if (deps.length === 0 || deps.length > MAX_DEPENDENCIES) return undefined;
  const clauses = deps.map(([name, dep]) => ({
    anyOf: [
      { type: 'object', [FORBIDDEN]: [name] },
      Array.isArray(dep)
        ? { type: 'object', required: [name, ...(dep as string[])] }
        : { type: 'object', required: [name], allOf: [dep] },
      { type: NOT_OBJECTS },
    ],
  }));
  const out: Obj = { ...schema };
  for (const key of DEPENDENCY_KEYWORDS) delete out[key];
  out.allOf = [...(Array.isArray(schema.allOf) ? (schema.allOf as unknown[]) : []), ...clauses];
  return out;
}
