import type { ElicitRequest, ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { isCodecallError } from '../errors/index.ts';
import type { JsonSchema, ToolContext } from '../spec/index.ts';

// A server's `elicitation/create` in the middle of a call (ADR 0047): a durable task pauses awaiting_input with the
// message and the requested schema; the human's answer is journaled, the call is cancelled and later made again,
// and the server's same request then gets the answer at once. A one-off run declines.

/** A message or schema over these bounds is declined: a server cannot fill the journal or a reviewer's screen. */
const MAX_MESSAGE_CHARS = 4_000;
const MAX_SCHEMA_CHARS = 16_384;

/** The call an elicitation belongs to: its context, and how to stop it when the task pauses for the answer. */
export interface ElicitingCall {
  readonly ctx: ToolContext;
  /** `tools.<server>.<tool>`: the name the human answers by. */
  readonly tool: string;
  /** Cancels the MCP call (notifications/cancelled) with this reason. */
  stop(reason: unknown): void;
}

const ACTIONS = new Set(['accept', 'decline', 'cancel']);

/**
 * The human's answer as the server takes it: `{ "action": "accept" | "decline" | "cancel", "content": {...} }` as
 * given, or any other JSON object as the accepted content; anything else declines.
 */
export function elicitResultOf(answer: unknown): ElicitResult {
  if (answer !== null && typeof answer === 'object' && !Array.isArray(answer)) {
    const a = answer as Record<string, unknown>;
    if (typeof a.action === 'string' && ACTIONS.has(a.action)) {
      const content = a.content;
      return a.action === 'accept' &&
        content !== null &&
        typeof content === 'object' &&
        !Array.isArray(content)
        ? ({ action: 'accept', content } as ElicitResult)
        : { action: a.action as ElicitResult['action'] };
    }
    return { action: 'accept', content: a } as ElicitResult;
  }
  return { action: 'decline' };
}

/** Answers one `elicitation/create`, for the calls in flight on the server that sent it. */
export async function answerElicitation(
  params: ElicitRequest['params'],
  inFlight: readonly ElicitingCall[],
): Promise<ElicitResult> {
  const [call] = inFlight;
  const message = typeof params.message === 'string' ? params.message : '';
  if (inFlight.length !== 1 || call === undefined) {
    // The protocol does not say which call a request belongs to: with none or several in flight, none is asked.
    for (const c of inFlight) {
      c.ctx.log?.(
        `declined the MCP server's request for input ("${message.slice(0, 200)}"): ${inFlight.length} calls in flight, which one asked is not known`,
      );
    }
    return { action: 'decline' };
  }
  const decline = (why: string): ElicitResult => {
    call.ctx.log?.(`declined the MCP server's request for input ("${message.slice(0, 200)}"): ${why}`);
    return { action: 'decline' };
  };
  if (params.mode === 'url' || !('requestedSchema' in params))
    return decline('only form requests are answered');
  const schema = params.requestedSchema as JsonSchema;
  if (message.length > MAX_MESSAGE_CHARS || JSON.stringify(schema).length > MAX_SCHEMA_CHARS) {
    return decline(`its message or schema is over ${MAX_MESSAGE_CHARS} / ${MAX_SCHEMA_CHARS} characters`);
  }
  if (!call.ctx.requestInput) {
    return decline(
      'a one-off run cannot pause for an answer (run it as a durable task: --db, or the service)',
    );
  }
  try {
    const answer = await call.ctx.requestInput({ name: call.tool, message, schema });
    const result = elicitResultOf(answer);
    call.ctx.log?.(
      `answered the MCP server's request for input ("${message.slice(0, 200)}"): ${result.action}`,
    );
    return result;
  } catch (e) {
    if (isCodecallError(e) && e.code === 'AWAITING_INPUT') {
      // The task pauses for the answer: this call stops here and is made again when the answer is in.
      call.stop(e);
      return { action: 'cancel' };
    }
    if (isCodecallError(e) && e.code === 'INPUT_TIMEOUT') return { action: 'cancel' };
    throw e;
  }
}
