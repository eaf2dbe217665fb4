import { decodeValue } from '../codec/index.ts';
import { CodecallError } from '../errors/index.ts';
import type { HostCall, ToolInputRequest } from '../spec/index.ts';
import { elicitationKey } from './journal-memory.ts';
import type { CallMark, CallState } from './journal-memory.ts';

/** One live call's requests for input: whether it is waiting for one (then its outcome is not journaled). */
export interface CallInputs {
  /** A request of this call was journaled (or found asked) without an answer: the task pauses for it. */
  waiting: boolean;
  /** The requests whose answers this run of the call has taken, each once. */
  readonly used: Set<string>;
}

export interface ToolInputOptions {
  readonly memory: CallState;
  /** Journals a mark (and folds it into `memory` at once). */
  mark(entries: readonly CallMark[]): Promise<void>;
  /** The runner pauses the execution awaiting_input (after this turn's other requests). */
  onInputRequired(): void;
}

/**
 * `ToolContext.requestInput` of a live tool call (ADR 0047). A call made again after the task paused for its
 * request asks the same thing again: the journaled answer (the first one of the same name, message and schema
 * that this run has not taken) is returned at once. Otherwise the request is journaled as an `input_request`
 * (`<call>~<n>`, `for_call`), the run pauses, and the tool is told to stop (AWAITING_INPUT).
 */
export async function requestToolInput(
  call: HostCall & { kind: 'tool' },
  request: ToolInputRequest,
  state: CallInputs,
  options: ToolInputOptions,
): Promise<unknown> {
  const schemaJson = JSON.stringify(request.schema ?? null);
  const key = elicitationKey(request.name, request.message, schemaJson);
  const asked = options.memory.elicited.get(call.callId) ?? [];
  const match = asked.find((a) => a.key === key && !state.used.has(a.id));
  if (match) {
    const answer = options.memory.inputs.get(match.id);
    if (answer !== undefined) {
      state.used.add(match.id);
      if (answer === null) {
        throw new CodecallError(
          'INPUT_TIMEOUT',
          `no input "${request.name}" arrived before the wait timed out`,
        );
      }
      return decodeValue(answer);
    }
  } else {
    await options.mark([
      {
        type: 'input_request',
        data: {
          call_id: `${call.callId}~${asked.length + 1}`,
          name: request.name,
          timeout_seconds: null,
          deadline: null,
          for_call: call.callId,
          message: request.message,
          schema: schemaJson,
        },
      },
    ]);
  }
  state.waiting = true;
  options.onInputRequired();
  throw new CodecallError(
    'AWAITING_INPUT',
    `${call.namespace}.${call.name} waits for input "${request.name}"`,
  );
}
