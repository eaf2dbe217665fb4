import type { ToolDefinition } from '../spec/index.ts';
import { SchemaValidator } from '../tools/index.ts';

export type ArgumentsCheck =
  { readonly ok: true } | { readonly ok: false; readonly code: 'TOOL_VALIDATION'; readonly message: string };

/**
 * Checks a call's arguments against the tool's input schema (the original one, also for strict tools), with a
 * message naming the field for the model to fix its call: `city: must be string`, `units: is required`,
 * `arguments: must be object` for the value itself. Throws INVALID_ARGUMENT when the schema does not compile.
 */
export function validateToolArguments(tool: ToolDefinition, args: unknown): ArgumentsCheck {
  const violation = SchemaValidator.shared.validate(tool.inputSchema, args);
  if (violation === null) return { ok: true };
  const field = violation.field === '' ? 'arguments' : violation.field;
  return { ok: false, code: 'TOOL_VALIDATION', message: `${field}: ${violation.message}` };
}
