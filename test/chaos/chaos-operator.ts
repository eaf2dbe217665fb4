// The harness as an operator, through the API of whichever server is up: decides approvals (one at a time or all
// together, as the seed says) and attentions (skip with the right result when the ledger shows the side effect
// happened, retry when it did not), and notes every pause it acts on.
import type { Ledger } from './ledger.ts';
import { resultOf } from './chaos-tools.ts';
import type { Effect } from './chaos-tools.ts';

/** How long a task paused by a shutdown may wait for a live server to take it up before the harness does. */
const SHUTDOWN_GRACE_MS = 3_000;

interface ListedTask {
  task_id: string;
  status: string;
  pause_reason: string | null;
  pending_approvals: { id: string; tool: string; arguments: { op?: string } }[];
  attention: { call_id: string; tool: string; arguments: { op?: string } } | null;
  attention_calls?: { call_id: string; tool: string; arguments: { op?: string } }[];
}

export interface AttentionSeen {
  readonly taskId: string;
  readonly op: string;
  readonly at: number;
  /** How many faults had struck when it was resolved: two rounds of a task in one epoch are one too many. */
  readonly epoch: number;
  /** The needs_attention pause it was decided in (one round: every call that pause listed). */
  readonly round: number;
  readonly action: 'retry' | 'skip';
}

export interface OperatorFigures {
  approvalPauses: number;
  approvalsOneByOne: number;
  approvalsTogether: number;
  attention: AttentionSeen[];
  otherPauses: number;
  shutdownPausesLeftWaiting: number;
}

export interface Operator {
  readonly figures: OperatorFigures;
  /** One look at the paused tasks and a decision on each. */
  poll(base: string, epoch: number): Promise<void>;
}

export function createOperator(options: {
  ledger: Ledger;
  random: () => number;
  effectOf: (op: string) => Effect;
  /** The admin key's header when the servers check keys (it sees and steers every tenant's tasks). */
  headers?: () => Record<string, string>;
}): Operator {
  const auth = (): Record<string, string> => options.headers?.() ?? {};
  const figures: OperatorFigures = {
    approvalPauses: 0,
    approvalsOneByOne: 0,
    approvalsTogether: 0,
    attention: [],
    otherPauses: 0,
    shutdownPausesLeftWaiting: 0,
  };
  const seenApprovals = new Set<string>();
  const seenOther = new Map<string, number>();
  let rounds = 0;
  const post = (base: string, path: string, body: unknown): Promise<Response> =>
    fetch(`${base}/api/v1${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth() },
      body: JSON.stringify(body),
    });

  async function decide(base: string, task: ListedTask, epoch: number): Promise<void> {
    const id = task.task_id;
    if (task.pause_reason === 'approval_required' && task.pending_approvals.length > 0) {
      const key = `${id}:${task.pending_approvals.map((a) => a.id).join(',')}`;
      if (!seenApprovals.has(key)) {
        seenApprovals.add(key);
        figures.approvalPauses++;
      }
      const first = task.pending_approvals[0];
      if (task.pending_approvals.length > 1 && options.random() < 0.5 && first) {
        const r = await post(base, `/tasks/${id}/approvals/${first.id}`, { decision: 'approve' });
        if (r.ok) figures.approvalsOneByOne++;
      } else {
        const r = await post(base, `/tasks/${id}/approvals`, { decision: 'approve' });
        if (r.ok) figures.approvalsTogether++;
      }
      return;
    }
    if (task.pause_reason === 'needs_attention' && task.attention) {
      // Servers that raise every call in doubt at once list them in attention_calls (decided by call_id, in one
      // round); older ones raise one call at a time.
      const many = task.attention_calls !== undefined;
      const calls = task.attention_calls ?? [task.attention];
      const round = ++rounds;
      for (const call of calls) {
        const op = String(call.arguments.op);
        // A careful operator looks at the external system: charged already means skip with what it returned.
        const happened = options.ledger.records.some((r) => r.kind === 'write' && r.op === op);
        const action = happened ? 'skip' : 'retry';
        const body = {
          action,
          ...(many ? { call_id: call.call_id } : {}),
          ...(action === 'skip' ? { result: resultOf(op, options.effectOf(op)) } : {}),
        };
        const r = await post(base, `/tasks/${id}/attention`, body);
        if (r.ok) figures.attention.push({ taskId: id, op, at: Date.now(), epoch, round, action });
      }
      return;
    }
    // A pause nobody asked for here (a shutdown): the live servers should take it up by themselves; past a grace
    // of many poll intervals the harness resumes it and counts it as left waiting.
    const key = `${id}:${task.pause_reason}`;
    const since = seenOther.get(key);
    if (since === undefined) {
      seenOther.set(key, Date.now());
      figures.otherPauses++;
      return;
    }
    if (Date.now() - since < SHUTDOWN_GRACE_MS) return;
    seenOther.set(key, Infinity);
    if (task.pause_reason === 'shutdown') figures.shutdownPausesLeftWaiting++;
    await post(base, `/tasks/${id}/control`, { action: 'resume' });
  }

  return {
    figures,
    async poll(base, epoch) {
      let cursor: string | null = null;
      do {
        const query = `status=paused&limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
        const page = (await (await fetch(`${base}/api/v1/tasks?${query}`, { headers: auth() })).json()) as {
          tasks: ListedTask[];
          next_cursor: string | null;
        };
        // A decision that lost a race (the task changed meanwhile) is seen again on the next poll.
        for (const task of page.tasks) await decide(base, task, epoch).catch(() => undefined);
        cursor = page.next_cursor;
      } while (cursor);
    },
  };
}
