import { CodecallError } from '../errors/index.ts';
import type { JsonSchema, ResponseFormat } from '../spec/index.ts';
import { SchemaValidator } from '../tools/index.ts';

/** The name the answer's schema goes under in `response_format` (OpenAI and Mistral want one). */
export const ANSWER_FORMAT_NAME = 'answer';

/** At submit: an answer schema that Ajv cannot compile is INVALID_ARGUMENT naming `answer_schema`. */
export function checkAnswerSchema(schema: Readonly<Record<string, unknown>>): void {
  try {
    SchemaValidator.shared.compile(schema);
  } catch (e) {
    throw new CodecallError('INVALID_ARGUMENT', `answer_schema: ${(e as Error).message}`, {
      details: { field: 'answer_schema' },
    });
  }
}

/** The answer's schema as the model client's constraint (sent in the provider's form, ADR 0057). */
export function answerFormat(schema: JsonSchema): ResponseFormat {
  return { name: ANSWER_FORMAT_NAME, schema };
}

export type CheckedAnswer =
  { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly message: string };

/**
 * A text answer read as one JSON value of the schema. A reply wrapped in one fenced block (```json ... ```) is
 * read inside it: models do that when the server does not constrain them.
 */
export function checkTextAnswer(schema: JsonSchema, text: string): CheckedAnswer {
  const fenced = /^```[\w-]*[ \t]*\r?\n([\s\S]*?)\r?\n```$/.exec(text.trim());
  const json = fenced?.[1] ?? text;
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (e) {
    return {
      ok: false,
      message: `Your answer must be one JSON value of the answer schema, and it is not JSON (${(e as Error).message}). Answer again with the JSON value alone.`,
    };
  }
  return checkValueAnswer(schema, value);
}

/** A value (a text answer's, or `final_answer(value)`'s) against the schema. */
export function checkValueAnswer(schema: JsonSchema, value: unknown): CheckedAnswer {
  const violation = SchemaValidator.shared.validate(schema, value);
  if (violation === null) return { ok: true, value };
  const where = violation.field === '' ? 'the answer' : `the answer's ${violation.field}`;
  return {
    ok: false,
    message: `Your answer does not match the answer schema: ${where} ${violation.message}. Answer again with one JSON value of the schema.`,
  };
}
