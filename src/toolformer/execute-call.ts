import { failure } from '../errors/index.ts';
import type { SerializedError, ToolDefinition } from '../spec/index.ts';
import { DEFAULT_TOOL_NAMESPACE, type ToolRegistry } from '../tools/index.ts';
import type { InlineCall } from './inline-form.ts';

/** Results longer than this are not inserted into text: the call is dropped (the paper's results are a few words). */
export const DEFAULT_MAX_RESULT_CHARS = 1024;

export interface ExecuteCallOptions {
  readonly namespace?: string;
  /** The tool's arguments from the call's text input; default: see inlineArguments. */
  readonly argumentsFor?: (tool: ToolDefinition, input: string) => unknown;
  readonly maxResultChars?: number;
  readonly signal?: AbortSignal;
  /** Names the call for the tool (ToolContext.callId); default `toolformer-<n>`. */
  readonly callId?: string;
}

export type ExecutedCall =
  | { readonly ok: true; readonly arguments: unknown; readonly result: string }
  | { readonly ok: false; readonly error: SerializedError };

let calls = 0;

/**
 * Runs one sampled call through codecall's tool path: the registry's host looks the tool up, validates the
 * arguments against its schema, runs it and reports a thrown error as data; a failing or refused call comes back as
 * `{ ok: false, error }` with the code it failed with (the sample is dropped for that reason).
 */
export async function executeInlineCall(
  registry: ToolRegistry,
  call: InlineCall,
  options: ExecuteCallOptions = {},
): Promise<ExecutedCall> {
  const namespace = options.namespace ?? DEFAULT_TOOL_NAMESPACE;
  const tool = registry.get(namespace, call.tool);
  if (tool === undefined) {
    return { ok: false, error: failure('NO_SUCH_TOOL', `no tool ${namespace}.${call.tool}`) };
  }
  const args = (options.argumentsFor ?? inlineArguments)(tool, call.input);
  const outcome = await registry
    .host()
    .call(
      { kind: 'tool', callId: options.callId ?? `toolformer-${++calls}`, namespace, name: call.tool, args },
      options.signal ?? new AbortController().signal,
    );
  if (!outcome.ok) return { ok: false, error: outcome.error };
  const result = resultText(outcome.value);
  const max = options.maxResultChars ?? DEFAULT_MAX_RESULT_CHARS;
  if (result.length > max) {
    return {
      ok: false,
      error: failure('INVALID_ARGUMENT', `the result is ${result.length} characters, over ${max}`),
    };
  }
  return { ok: true, arguments: args, result };
}

/**
 * The paper's calls take one text input. A tool whose schema has exactly one property gets the input as that
 * property (`{ expression: "400/1400" }`); any other gets the input read as a JSON object (`{"a": 1}`), or as
 * `{ input }` when it is not one, which its schema then accepts or refuses.
 */
export function inlineArguments(tool: ToolDefinition, input: string): unknown {
  const schema = tool.inputSchema as { properties?: Record<string, unknown> };
  const names = Object.keys(schema.properties ?? {});
  if (names.length === 1) return { [names[0] as string]: input };
  const trimmed = input.trim();
  if (trimmed.startsWith('{')) {
    try {
      return JSON.parse(trimmed) as unknown;
    } catch {
      // Not JSON after all: taken as text below.
    }
  }
  return { input };
}

/** A result as text for the inline form: strings as they are, anything else as JSON. */
export function resultText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return '';
  return JSON.stringify(value) ?? '';
}
