import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject, ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { canonicalJson } from '../codec/index.ts';
import { CodecallError } from '../errors/index.ts';
import type { JsonSchema } from '../spec/index.ts';
import { linearRegExp } from './linear-regexp.ts';

// ajv-formats is CommonJS; its default export arrives wrapped under NodeNext.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

export interface SchemaViolation {
  /** Dotted path of the offending field (`city`, `items[2].id`), empty for the value itself. */
  field: string;
  message: string;
}

/**
 * Compiles JSON Schemas once and reports violations naming the field. Compiled schemas are kept per object and
 * per content: Ajv registers a schema's `$id` on the instance, so an equal schema (another tool's copy) must get
 * the validator already compiled, while a different schema under a taken `$id` is refused (INVALID_ARGUMENT).
 */
export class SchemaValidator {
  private readonly ajv: Ajv2020;
  private readonly cache = new WeakMap<JsonSchema, ValidateFunction>();
  private readonly byContent = new Map<string, ValidateFunction>();

  /** One process-wide instance: an Ajv instance is costly to create, and compiled schemas are cached. */
  static readonly shared = new SchemaValidator();

  constructor() {
    this.ajv = new Ajv2020({
      allErrors: false,
      strict: false,
      validateFormats: true,
      code: { regExp: linearRegExp },
    });
    addFormats(this.ajv);
  }

  /** Throws INVALID_ARGUMENT when the schema itself does not compile. */
  compile(schema: JsonSchema): ValidateFunction {
    const cached = this.cache.get(schema);
    if (cached) return cached;
    const { $schema: _ignored, ...rest } = schema;
    const key = canonicalJson(rest);
    let fn = this.byContent.get(key);
    if (!fn) {
      try {
        fn = this.ajv.compile(rest);
      } catch (cause) {
        throw new CodecallError('INVALID_ARGUMENT', `invalid JSON Schema: ${(cause as Error).message}`, {
          cause,
        });
      }
      this.byContent.set(key, fn);
    }
    this.cache.set(schema, fn);
    return fn;
  }

  validate(schema: JsonSchema, value: unknown): SchemaViolation | null {
    const fn = this.compile(schema);
    if (fn(value)) return null;
    const first = fn.errors?.[0];
    return first ? describeViolation(first) : { field: '', message: 'does not match the schema' };
  }
}

function describeViolation(error: ErrorObject): SchemaViolation {
  const segments = error.instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'required' && typeof params.missingProperty === 'string') {
    segments.push(params.missingProperty);
    return { field: joinPath(segments), message: 'is required' };
  }
  if (error.keyword === 'additionalProperties' && typeof params.additionalProperty === 'string') {
    segments.push(params.additionalProperty);
    return { field: joinPath(segments), message: 'is not allowed' };
  }
  return { field: joinPath(segments), message: error.message ?? 'is invalid' };
}

function joinPath(segments: readonly string[]): string {
  let out = '';
  for (const s of segments) {
    if (/^\d+$/.test(s)) out += `[${s}]`;
    else out += out === '' ? s : `.${s}`;
  }
  return out;
}
