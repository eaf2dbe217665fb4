/**
 * The constraint of a request in the form its provider accepts (ADR 0057): a structured final answer's schema as
 * `response_format`, llama.cpp's `json_schema` or GBNF `grammar`, vLLM's `structured_outputs`/`guided_json`; the
 * tools' `strict` flag where the preset has it. Nothing is changed silently: a schema outside OpenAI's strict
 * subset goes non-strict with a warning, and keywords our GBNF export cannot enforce are named in one.
 */
import { grammarToGbnf, schemaToGrammar } from '../grammar/index.ts';
import type { JsonSchema, ResponseFormat, ToolSpec } from '../spec/index.ts';
import { isRecord } from '../spec/is-record.ts';
import type { ProviderPreset, ResponseConstraint } from './provider-presets.ts';

/** Something the client changed or could not do as asked, said rather than done silently. */
export interface ModelWarning {
  readonly code: 'STRICT_SCHEMA_FALLBACK' | 'GRAMMAR_UNENFORCED';
  readonly message: string;
}

export type WarningSink = (warning: ModelWarning) => void;

/** Where a schema leaves OpenAI's strict subset (root not an object, an object not closed or with an optional property); null inside it. */
export function strictSubsetViolation(schema: JsonSchema): string | null {
  if (!isRecord(schema) || schema.type !== 'object') return '#: the root must be an object schema';
  return walk(schema, '#', 0);
}

const MAX_WALK_DEPTH = 64;

function walk(node: unknown, path: string, depth: number): string | null {
  if (!isRecord(node)) return null;
  if (depth > MAX_WALK_DEPTH) return `${path}: nested deeper than ${MAX_WALK_DEPTH}`;
  const props = isRecord(node.properties) ? node.properties : undefined;
  const isObject = node.type === 'object' || (Array.isArray(node.type) && node.type.includes('object'));
  if (isObject || props !== undefined) {
    if (node.additionalProperties !== false) return `${path}: additionalProperties must be false`;
    const required = Array.isArray(node.required) ? node.required : [];
    const missing = Object.keys(props ?? {}).filter((key) => !required.includes(key));
    if (missing.length > 0) return `${path}: every property must be required (not: ${missing.join(', ')})`;
  }
  const children: [unknown, string][] = [];
  for (const [key, sub] of Object.entries(props ?? {})) children.push([sub, `${path}/properties/${key}`]);
  if (node.items !== undefined) children.push([node.items, `${path}/items`]);
  for (const key of ['anyOf', 'allOf', 'oneOf'] as const) {
    const list = node[key];
    if (Array.isArray(list)) list.forEach((sub, i) => children.push([sub, `${path}/${key}/${i}`]));
  }
  for (const key of ['$defs', 'definitions'] as const) {
    const defs = node[key];
    if (isRecord(defs))
      for (const [name, sub] of Object.entries(defs)) children.push([sub, `${path}/${key}/${name}`]);
  }
  for (const [sub, at] of children) {
    const found = walk(sub, at, depth + 1);
    if (found !== null) return found;
  }
  return null;
}

/** A tool on the wire: `strict: true` only where the preset takes it and the schema is in the strict subset. */
export function wireTool(tool: ToolSpec, preset: ProviderPreset, warn: WarningSink): Record<string, unknown> {
  let strict = tool.strict === true && preset.strictTools;
  if (strict) {
    const why = strictSubsetViolation(tool.parameters);
    if (why !== null) {
      strict = false;
      warn({
        code: 'STRICT_SCHEMA_FALLBACK',
        message: `tool ${tool.name} is sent without strict: its parameters are outside the strict subset (${why})`,
      });
    }
  }
  return {
    type: 'function',
    function: {
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters,
      ...(strict ? { strict: true } : {}),
    },
  };
}

/** The body fields that carry a structured final answer's schema in `form`. */
export function responseConstraintFields(
  format: ResponseFormat,
  form: ResponseConstraint,
  preset: ProviderPreset,
  warn: WarningSink,
): Record<string, unknown> {
  switch (form) {
    case 'none':
      return {};
    case 'json_schema':
      return { json_schema: format.schema };
    case 'structured_outputs':
      return { structured_outputs: { json: format.schema } };
    case 'guided_json':
      return { guided_json: format.schema };
    case 'grammar': {
      const { grammar, issues } = schemaToGrammar(format.schema, { whitespace: 'flexible' });
      if (issues.length > 0) {
        const keywords = [...new Set(issues.map((issue) => issue.keyword))].join(', ');
        warn({
          code: 'GRAMMAR_UNENFORCED',
          message: `the grammar sent for ${format.name} does not enforce: ${keywords} (the answer is still validated)`,
        });
      }
      return { grammar: grammarToGbnf(grammar) };
    }
    case 'response_format': {
      let strict = format.strict !== false && preset.strictResponse;
      if (strict) {
        const why = strictSubsetViolation(format.schema);
        if (why !== null) {
          strict = false;
          warn({
            code: 'STRICT_SCHEMA_FALLBACK',
            message: `response format ${format.name} is sent without strict: its schema is outside the strict subset (${why})`,
          });
        }
      }
      const jsonSchema: Record<string, unknown> = { name: format.name, schema: format.schema };
      if (preset.strictResponse) jsonSchema.strict = strict;
      return { response_format: { type: 'json_schema', json_schema: jsonSchema } };
    }
  }
}
