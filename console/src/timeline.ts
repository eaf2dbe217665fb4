import { egressRequestView, egressResponseView, egressTitle, isEgressTool } from './egress-view.ts';
import { ms, payload } from './format.ts';
import { plural } from './plural.ts';
import type { CallOrigin, TaskEvent } from './types.ts';

/** One line of a task's timeline, built from its journal and audit log. */
export interface TimelineItem {
  readonly key: string;
  readonly kind:
    | 'start'
    | 'model'
    | 'code'
    | 'tool'
    | 'carry'
    | 'approval'
    | 'decision'
    | 'input'
    | 'control'
    | 'step'
    | 'status';
  readonly at: string;
  readonly title: string;
  readonly detail?: string;
  /** Code steps: the program. */
  readonly code?: string;
  /** Tool calls. */
  readonly call?: {
    readonly tool: string;
    readonly arguments: unknown;
    readonly ok: boolean | null;
    readonly outcome?: unknown;
    readonly duration?: string;
    /** Not run: its value taken over from this earlier call (ADR 0034). */
    readonly carried?: CallOrigin;
  };
  /** Calls of earlier attempts this one was offered, or the earlier call a held one stands beside. */
  readonly earlier?: readonly {
    readonly origin: CallOrigin;
    readonly tool: string;
    readonly arguments?: unknown;
  }[];
}

const str = (v: unknown): string => {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return v === undefined || v === null ? '' : JSON.stringify(v);
};
const by = (d: Readonly<Record<string, unknown>>): string => (d.actor ? ` by ${str(d.actor)}` : '');
const because = (d: Readonly<Record<string, unknown>>): string => (d.reason ? `: ${str(d.reason)}` : '');

/** A call's origin as journaled, or undefined when it is not one (the data is the task's, so checked). */
export function origin(v: unknown): CallOrigin | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const { call_id, task_id } = v as Record<string, unknown>;
  if (typeof call_id !== 'string') return undefined;
  return typeof task_id === 'string' ? { task_id, call_id } : { call_id };
}

/** `await_approval` as "Await approval". */
const action = (name: string): string => {
  const words = name.replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
};

/** Why a call was refused before it ran (its intent's `over_budget`): a task's budget or its tenant's limit. */
const refusedBy = (name: string): string =>
  name === 'tenant_rate'
    ? "the tenant's rate limit"
    : name === 'tenant_quota'
      ? "the tenant's quota"
      : `the task's ${name.replace(/_/g, ' ')} budget`;

const offered = (n: number): string =>
  `Offered ${plural(n, 'call')} completed by earlier attempts (taken over when asked again)`;

/**
 * The journal (what the program and the model did, and what humans decided) and the audit log (status changes)
 * as one list in the order given; a tool call's outcome is folded into its intent, with the time it ran (from its
 * intent, or from its start once approved: waiting for a human is not the tool's time).
 */
export function timeline(events: readonly TaskEvent[]): TimelineItem[] {
  const out: TimelineItem[] = [];
  // Each call's intent: where its item is in `out`, and when it was journaled.
  const intents = new Map<string, { index: number; at: string }>();
  // A call that needed approval ran from its start (after the decision), not from its intent.
  const asked = new Set<string>();
  const started = new Map<string, string>();
  for (const e of events) {
    const d = e.data;
    const key = `${e.source ?? 'journal'}-${e.seq}`;
    const base = { key, at: e.created_at };
    if (e.source === 'audit') {
      if (e.type === 'status') {
        const reason = d.pause_reason
          ? ` (${str(d.pause_reason)})`
          : d.error_code
            ? ` (${str(d.error_code)})`
            : '';
        out.push({ ...base, kind: 'status', title: `${str(d.from)} → ${str(d.to)}${reason}${by(d)}` });
      }
      continue;
    }
    switch (e.type) {
      case 'task_input':
        out.push({ ...base, kind: 'start', title: `Task started (${str(d.language)}, seed ${str(d.seed)})` });
        break;
      case 'model_request':
        out.push({ ...base, kind: 'model', title: `Model asked (step ${str(d.step)})` });
        break;
      case 'model_reply':
        out.push({
          ...base,
          kind: 'model',
          title: `Model replied (step ${str(d.step)}${d.model ? `, ${str(d.model)}` : ''})`,
          detail: str(d.content),
        });
        break;
      case 'code_block':
        out.push({
          ...base,
          kind: 'code',
          title: `Code block ${str(d.block)}`,
          ...(typeof d.code === 'string' ? { code: d.code } : {}),
        });
        break;
      case 'tool_intent': {
        const id = str(d.call_id);
        const carried = origin(d.carried_from);
        // A read's intent comes with its outcome and says when its tool started (ADR 0047, amended 2026-12-07).
        const at = typeof d.started_at === 'number' ? new Date(d.started_at).toISOString() : e.created_at;
        intents.set(id, { index: out.length, at });
        const tool = str(d.tool);
        const args = payload(d.args);
        const fetched = isEgressTool(tool);
        out.push({
          ...base,
          kind: 'tool',
          title: `${(fetched ? egressTitle(args) : null) ?? tool} (${id})${
            typeof d.over_budget === 'string' ? `, not run: refused by ${refusedBy(d.over_budget)}` : ''
          }`,
          call: {
            tool,
            arguments: fetched ? egressRequestView(args) : args,
            ok: null,
            ...(carried ? { carried } : {}),
          },
        });
        break;
      }
      case 'carry_offer': {
        // A revision's offers are journaled together before its code: one item for the run of them.
        const offer = { origin: origin(d.origin) ?? { call_id: '?' }, tool: str(d.tool) };
        const last = out.at(-1);
        if (last?.kind === 'carry' && last.earlier) {
          const earlier = [...last.earlier, offer];
          out[out.length - 1] = { ...last, title: offered(earlier.length), earlier };
        } else {
          out.push({ ...base, kind: 'carry', title: offered(1), earlier: [offer] });
        }
        break;
      }
      case 'tool_outcome': {
        const id = str(d.call_id);
        const intent = intents.get(id);
        const item = intent && out[intent.index];
        if (intent && item?.call) {
          // A call refused (or never started) after an approval request has no run time to show; a call taken
          // over did not run at all.
          const from = item.call.carried ? undefined : asked.has(id) ? started.get(id) : intent.at;
          const took = from === undefined ? NaN : Date.parse(e.created_at) - Date.parse(from);
          out[intent.index] = {
            ...item,
            call: {
              ...item.call,
              ok: d.ok === true,
              outcome:
                d.ok === true && isEgressTool(item.call.tool)
                  ? egressResponseView(payload(d.payload))
                  : payload(d.payload),
              ...(Number.isFinite(took) ? { duration: ms(took) } : {}),
            },
          };
        }
        break;
      }
      case 'approval_request':
        asked.add(str(d.call_id));
        out.push({
          ...base,
          kind: 'approval',
          title: `Approval asked for ${str(d.tool)} (${str(d.approval_id)})`,
          detail: JSON.stringify(payload(d.args)),
        });
        break;
      case 'approval_decision':
        out.push({
          ...base,
          kind: 'decision',
          title: `${d.decision === 'approve' ? 'Approved' : 'Rejected'} ${str(d.approval_id)}${by(d)}${because(d)}`,
        });
        break;
      case 'input_request':
        out.push({ ...base, kind: 'input', title: `Waits for input "${str(d.name)}"` });
        break;
      case 'input_provided':
        out.push({ ...base, kind: 'input', title: `Input "${str(d.name)}" given${by(d)}` });
        break;
      case 'input_timeout':
        out.push({ ...base, kind: 'input', title: `Input "${str(d.name)}" timed out` });
        break;
      case 'attention_decision':
        out.push({
          ...base,
          kind: 'control',
          title: `Call ${str(d.call_id)}: ${str(d.action)}${by(d)}${because(d)}`,
        });
        break;
      case 'control':
        if (d.action === 'attempt') break;
        if (d.action === 'revision_held') {
          const held = (typeof d.earlier === 'object' && d.earlier !== null ? d.earlier : {}) as Readonly<
            Record<string, unknown>
          >;
          out.push({
            ...base,
            kind: 'control',
            title: `Held ${str(d.call_id)} for a human: an earlier attempt already ran ${str(held.tool)} with other arguments`,
            earlier: [
              {
                origin: origin(held.origin) ?? { call_id: '?' },
                tool: str(held.tool),
                arguments: payload(held.args),
              },
            ],
          });
          break;
        }
        if (d.action === 'approved_call_started') started.set(str(d.call_id), e.created_at);
        out.push({ ...base, kind: 'control', title: `${action(str(d.action))}${by(d)}${because(d)}` });
        break;
      case 'step_result':
        out.push({
          ...base,
          kind: 'step',
          title: `Step ${str(d.step)} ${d.ok === true ? 'ended' : 'failed'}${d.final === true ? ' (final)' : ''}`,
          ...(d.ok === true ? {} : { detail: JSON.stringify(d.error ?? null) }),
        });
        break;
      default:
        // clock, manifest: bookkeeping of replay, not steps a person follows.
        break;
    }
  }
  return out;
}
