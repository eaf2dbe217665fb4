import { encodeValue } from '../codec/index.ts';
import { defaultRevisedCallPolicy } from '../spec/index.ts';
import type {
  ApprovalRules,
  RefusalName,
  CarryOffer,
  HostCall,
  RevisedCallPolicy,
  RevisedFrom,
  SerializedError,
  ToolEffect,
} from '../spec/index.ts';
import type { CarryPool } from './carry-pool.ts';
import { isInputWait, parseInputWait } from './input-wait.ts';
import type { CallState } from './journal-memory.ts';
import { wireForm } from './journal-wire.ts';
import type { Wire } from './journal-wire.ts';

/** What the host knows of a call besides the journal: its configuration, a function of the call alone. */
export interface CallPolicy {
  /** Whether this call must be approved by a human before it runs. */
  needsApproval?(call: HostCall): boolean;
  /**
   * The rules journaled with its approval request: the tool's own (who may decide) and the expiry, the shorter of
   * the tool's and the operator's (ADR 0031). Absent: open, never expiring.
   */
  approvalRules?(call: HostCall): ApprovalRules;
  /** What a call does to the world; decides whether an interrupted call may run again. */
  effectOf(call: HostCall): ToolEffect;
  /**
   * What a revision does with a call whose tool an earlier attempt completed with other arguments (ADR 0034);
   * absent: `defaultRevisedCallPolicy` of its effect.
   */
  revisedCall?(call: HostCall): RevisedCallPolicy;
}

/** What the JournalingHost does with a call, decided from the call and the journal alone (`decideCall`). */
export type CallDecision =
  /** New: journal its intent, then run it. */
  | { readonly kind: 'live'; readonly intent: Wire }
  /**
   * An earlier attempt completed the same call: journal it as taken over (`intent`; null when it already is),
   * then deliver that value (ADR 0034).
   */
  | { readonly kind: 'carry'; readonly intent: Wire | null; readonly offer: CarryOffer }
  /** New, and an earlier attempt completed this tool with other arguments: journal it held for a human. */
  | { readonly kind: 'hold'; readonly intent: Wire; readonly earlier: RevisedFrom }
  /** Its outcome is journaled: deliver it in its recorded place. */
  | { readonly kind: 'replay'; readonly position: number }
  /** A budget refused it and its outcome was lost (a crash between the two): it fails again, never runs. */
  | { readonly kind: 'refused'; readonly budget: RefusalName }
  /** The program now calls something else than the journal holds for this call: the execution cannot go on. */
  | { readonly kind: 'diverged'; readonly recorded: Wire; readonly now: Wire }
  /** It waits (or waited) for approval and never started: it goes on to its decision. */
  | { readonly kind: 'await_approval' }
  /** An `input.wait`: it has no effect on the world, so it simply waits again (or takes its answer). */
  | { readonly kind: 'await_input' }
  /** Journal that it starts again, then run it: it never started, or a human chose to retry it. */
  | { readonly kind: 'retry'; readonly why: 'not_started' | 'human' }
  /** Lost (intent, no outcome) and safe to repeat: run it again. */
  | { readonly kind: 'rerun' }
  /** Lost, and a human gave its result (`payload`, tagged JSON): journal that as its outcome. */
  | { readonly kind: 'skip'; readonly payload: string }
  /** Lost and not safe to repeat, or a revision's call held (`earlier`): a human must decide. */
  | { readonly kind: 'needs_attention'; readonly now: Wire; readonly earlier?: RevisedFrom };

export type CallDecisionKind = CallDecision['kind'];

/**
 * One call's fate. Pure: the same call, journal state, policy and offers of earlier attempts always decide the
 * same; the host only carries the decision out. The policy is asked only when the journal leaves the choice to it.
 */
export function decideCall(
  call: HostCall,
  state: CallState,
  policy: CallPolicy,
  earlier?: CarryPool,
): CallDecision {
  const now = wireForm(call);
  const recorded = state.intents.get(call.callId);
  if (!recorded)
    return earlier ? decideNew(call, now, state, policy, earlier) : { kind: 'live', intent: now };
  if (recorded.tool !== now.tool || recorded.args !== now.args) return { kind: 'diverged', recorded, now };
  const position = state.positions.get(call.callId);
  if (position !== undefined) return { kind: 'replay', position };
  const refused = state.refused.get(call.callId);
  if (refused !== undefined) return { kind: 'refused', budget: refused };
  // Taken over and interrupted before its value was journaled: it never ran, it is taken over again.
  const origin = state.carriedCalls.get(call.callId);
  const offer = origin && earlier?.byOrigin(origin);
  if (offer) return { kind: 'carry', intent: null, offer };
  const decided = state.attention.get(call.callId);
  // A revision's call held for a human: decided before anything else (a retry that starts makes it a call like
  // any other, approvals included).
  const held = state.held.get(call.callId);
  if (held) {
    if (decided?.action === 'skip') return { kind: 'skip', payload: decided.payload ?? encodeValue(null) };
    if (decided?.action === 'retry') return { kind: 'retry', why: 'human' };
    return { kind: 'needs_attention', now, earlier: held };
  }
  // A call that waits (or waited) for approval cannot have run before it was approved and started; one approved
  // that had started is a lost call like any other.
  const gated = state.requested.has(call.callId) || policy.needsApproval?.(call) === true;
  if (gated && !state.started.has(call.callId)) return { kind: 'await_approval' };
  if (state.notStarted.has(call.callId)) return { kind: 'retry', why: 'not_started' };
  if (isInputWait(call)) return { kind: 'await_input' };
  // The intent was committed but its outcome was lost (a crash while the call ran).
  if (decided?.action === 'skip') return { kind: 'skip', payload: decided.payload ?? encodeValue(null) };
  if (decided?.action === 'retry') return { kind: 'retry', why: 'human' };
  if (policy.effectOf(call) === 'unsafe') return { kind: 'needs_attention', now };
  return { kind: 'rerun' };
}

/**
 * A call of a revision that its journal does not hold yet: taken over when an earlier attempt completed the same
 * call, held when it completed the tool with other arguments and the tool's policy says to pause, else live.
 */
function decideNew(
  call: HostCall,
  now: Wire,
  state: CallState,
  policy: CallPolicy,
  earlier: CarryPool,
): CallDecision {
  if (call.kind !== 'tool') return { kind: 'live', intent: now };
  const effect = policy.effectOf(call);
  const fresh = earlier.rerunReads && (effect === 'read' || effect === 'idempotent');
  const offer = fresh ? null : earlier.match(now, state.carried);
  if (offer) return { kind: 'carry', intent: now, offer };
  // An input wait changes nothing in the world: another question is simply asked.
  if (!isInputWait(call) && (policy.revisedCall?.(call) ?? defaultRevisedCallPolicy(effect)) === 'pause') {
    const open = earlier.firstOpen(now.tool, state.carried);
    if (open)
      return {
        kind: 'hold',
        intent: now,
        earlier: { origin: open.origin, tool: open.tool, args: open.args },
      };
  }
  return { kind: 'live', intent: now };
}

/** The approval step of a call that runs (after its intent is journaled). */
export type ApprovalStep =
  /** Not gated and never asked: it runs. */
  | { readonly kind: 'none' }
  /** Gated and not asked yet: journal the request, then wait for a human. */
  | { readonly kind: 'request' }
  /** Asked, not decided: wait for a human again. */
  | { readonly kind: 'wait' }
  /** Rejected by a human, or `expired` (no one decided in time: APPROVAL_EXPIRED). */
  | { readonly kind: 'rejected'; readonly reason: string; readonly expired: boolean }
  /** Asked and approved (or no longer gated): journal that it starts, then run it. */
  | { readonly kind: 'start' };

export function decideApproval(call: HostCall, state: CallState, policy: CallPolicy): ApprovalStep {
  if (call.kind === 'tool' && policy.needsApproval?.(call)) {
    const decision = state.decisions.get(call.callId);
    if (!decision) return { kind: state.requested.has(call.callId) ? 'wait' : 'request' };
    if (decision.decision !== 'approve') {
      return { kind: 'rejected', reason: decision.reason, expired: decision.expired };
    }
  }
  return { kind: state.requested.has(call.callId) ? 'start' : 'none' };
}

/** The step of an `input.wait` call that runs. */
export type InputStep =
  /** Answered (a value's tagged JSON), or timed out (null). */
  | { readonly kind: 'answered'; readonly value: string | null }
  | { readonly kind: 'invalid'; readonly error: SerializedError }
  /** Not asked yet: journal the request, then wait. */
  | { readonly kind: 'request'; readonly name: string; readonly timeoutSeconds: number | null }
  /** Asked, not answered: wait again. */
  | { readonly kind: 'wait' };

export function decideInput(call: HostCall & { kind: 'tool' }, state: CallState): InputStep {
  const answer = state.inputs.get(call.callId);
  if (answer !== undefined) return { kind: 'answered', value: answer };
  const request = parseInputWait(call.args);
  if ('error' in request) return { kind: 'invalid', error: request.error };
  if (state.inputRequested.has(call.callId)) return { kind: 'wait' };
  return { kind: 'request', name: request.name, timeoutSeconds: request.timeoutSeconds };
}
