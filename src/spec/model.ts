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

export type ToolChoice = 'auto' | 'none' | 'required' | { readonly name: string };

export interface ModelRequest {
  /** Overrides the client's configured model for this request. */
  readonly model?: string;
  readonly messages: readonly ChatMessage[];
  readonly tools?: readonly ToolSpec[];
  readonly toolChoice?: ToolChoice;
  readonly temperature?: number;
  readonly maxTokens?: number;
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
