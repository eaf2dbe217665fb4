import type { JsonSchema } from './json-schema.ts';

/** A tool as the model sees it in function-calling requests. */
export interface ToolSpec {
  readonly name: string;
  readonly description: string;
  /** JSON Schema of the arguments object. */
  readonly parameters: JsonSchema;
  /**
   * Asks the provider to constrain the arguments to `parameters` exactly (OpenAI's structured outputs, sent as
   * `function.strict: true`). `parameters` must then be in the strict subset: every object closed and all its
   * properties required, optional ones nullable (see `strictSchema` in src/agent/tool-specs.ts). The flag goes on
   * the wire only to providers whose preset accepts it (`strictTools`); the others get the same schema without it.
   */
  readonly strict?: boolean;
}

/** One function call the model asked for. */
export interface ModelToolCall {
  readonly id: string;
  readonly name: string;
  /** Raw JSON text as the provider sent it; arguments sent as objects are re-serialized. */
  readonly arguments: string;
}

export type ChatMessage =
  | { readonly role: 'system'; readonly content: string }
  | { readonly role: 'user'; readonly content: string }
  | {
      readonly role: 'assistant';
      readonly content: string | null;
      readonly toolCalls?: readonly ModelToolCall[];
    }
  | { readonly role: 'tool'; readonly toolCallId: string; readonly content: string };

/**
 * A structured final answer: the reply's text must be one JSON value of `schema` (OpenAI's `response_format` with
 * a JSON schema). The client sends it in the form the provider accepts (ADR 0057).
 */
export interface ResponseFormat {
  /** A name for the schema (OpenAI and Mistral want one): [a-zA-Z0-9_-], up to 64 characters. */
  readonly name: string;
  readonly schema: JsonSchema;
  /**
   * Ask for strict constraining where the provider has it (OpenAI, Mistral); default true. A schema outside
   * OpenAI's strict subset (an object not closed, a property not required) goes non-strict, with a warning.
   */
  readonly strict?: boolean;
}

/**
 * Where a streamed reply was stopped because a byte could not lead to a value of its schema (ADR 0057): the
 * reply holds what came before it, and the agent feeds `message` back to the model.
 */
export interface ReplyViolation {
  readonly code: 'GRAMMAR_REJECTED';
  readonly message: string;
  /** The tool call (index into `toolCalls`) whose arguments broke; absent when it was the text (a final answer). */
  readonly toolCall?: number;
  /** Bytes of that value (arguments or text) taken before the refused one. */
  readonly position: number;
  /** The bytes that could have come there, as text (`'"'`, `'}'`, `'0'-'9'`). */
  readonly expected: readonly string[];
}

export type ToolChoice = 'auto' | 'none' | 'required' | { readonly name: string };

export interface ModelRequest {
  /** Overrides the client's configured model for this request. */
  readonly model?: string;
  readonly messages: readonly ChatMessage[];
  readonly tools?: readonly ToolSpec[];
  readonly toolChoice?: ToolChoice;
  readonly temperature?: number;
  readonly maxTokens?: number;
  /** Constrains a text reply to one JSON value of a schema (a structured final answer). */
  readonly responseFormat?: ResponseFormat;
}

export interface ModelUsage {
  readonly promptTokens: number;
  readonly completionTokens: number;
}

export interface ModelReply {
  readonly content: string | null;
  readonly toolCalls: readonly ModelToolCall[];
  /** As the provider reported it (`stop`, `tool_calls`, `length`, ...). */
  readonly finishReason: string;
  readonly usage: ModelUsage;
  /** The model that answered, as the provider named it. */
  readonly model: string;
  /** Set when codecall stopped the streamed reply at a byte its schema cannot take (ADR 0057). */
  readonly violation?: ReplyViolation;
}

export interface ModelCallOptions {
  readonly signal?: AbortSignal;
}

/**
 * A chat model. Failures are CodecallErrors: MODEL_AUTH, MODEL_UNAVAILABLE (retryable), MODEL_BAD_REPLY,
 * MODEL_REQUEST_INVALID, ABORTED when `signal` fires.
 */
export interface ModelClient {
  complete(request: ModelRequest, options?: ModelCallOptions): Promise<ModelReply>;
}
