// What the database says happened, read once every server is gone: when each call's intent and outcome were
// journaled, which calls waited for an approval, and who held each task when (from the audit log). The database
// is a SQLite file or a PostgreSQL database (chaos-db.ts reads either).
import { queryChaosDb } from './chaos-db.ts';
import type { ChaosDb } from './chaos-db.ts';

export interface CallFacts {
  readonly taskId: string;
  intentAt?: number;
  outcomeAt?: number;
  approvalRequestedAt?: number;
  approvalDecidedAt?: number;
}

/** One status link of the audit log: `ownerPid` is the pid in its actor when that is a lease owner, else null. */
export interface Holding {
  readonly at: number;
  readonly to: string;
  readonly ownerPid: number | null;
}

export interface DbFacts {
  /** By op (`T<i>.C<j>`). */
  readonly calls: ReadonlyMap<string, CallFacts>;
  /** By task id, in order. */
  readonly holdings: ReadonlyMap<string, readonly Holding[]>;
}

const OP = /T\d+\.C\d+/;

export async function readFacts(db: ChaosDb): Promise<DbFacts> {
  {
    const calls = new Map<string, CallFacts>();
    const opOfCall = new Map<string, string>();
    const journal = await queryChaosDb<{ task_id: string; type: string; data: string; created_at: number }>(
      db,
      `SELECT task_id, type, data, created_at FROM journal
        WHERE type IN ('tool_intent', 'tool_outcome', 'approval_request', 'approval_decision')
        ORDER BY task_id, seq`,
    );
    for (const row of journal) {
      const data = JSON.parse(row.data) as { call_id?: string; approval_id?: string; args?: string };
      const callKey = `${row.task_id}/${data.call_id ?? data.approval_id ?? ''}`;
      if (row.type === 'tool_intent') {
        const op = OP.exec(data.args ?? '')?.[0];
        if (op === undefined) continue;
        opOfCall.set(callKey, op);
        const facts = calls.get(op) ?? { taskId: row.task_id };
        facts.intentAt ??= row.created_at;
        calls.set(op, facts);
        continue;
      }
      const op = opOfCall.get(callKey);
      const facts = op === undefined ? undefined : calls.get(op);
      if (!facts) continue;
      if (row.type === 'tool_outcome') facts.outcomeAt ??= row.created_at;
      if (row.type === 'approval_request') facts.approvalRequestedAt ??= row.created_at;
      if (row.type === 'approval_decision') facts.approvalDecidedAt ??= row.created_at;
    }
    const holdings = new Map<string, Holding[]>();
    const audit = await queryChaosDb<{ task_id: string; data: string; created_at: number }>(
      db,
      `SELECT task_id, data, created_at FROM audit_log WHERE type = 'status' ORDER BY task_id, seq`,
    );
    for (const row of audit) {
      const data = JSON.parse(row.data) as { to: string; actor: string };
      const list = holdings.get(row.task_id) ?? [];
      list.push({ at: row.created_at, to: data.to, ownerPid: pidOfOwner(data.actor) });
      holdings.set(row.task_id, list);
    }
    return { calls, holdings };
  }
}

/** The pid holding the task's lease at `at`: the last status link up to then, if it is a claim. */
export function holderAt(holdings: readonly Holding[] | undefined, at: number): number | null {
  let holder: number | null = null;
  for (const h of holdings ?? []) {
    if (h.at > at) break;
    holder = h.to === 'running' ? h.ownerPid : null;
  }
  return holder;
}

/** The pids holding running tasks now, one per task (the harness's own read-only look at the database). */
export async function runningOwners(db: ChaosDb): Promise<number[]> {
  const rows = await queryChaosDb<{ lease_owner: string | null }>(
    db,
    `SELECT lease_owner FROM tasks WHERE status = 'running'`,
  );
  return rows.flatMap((r) => {
    const pid = pidOfOwner(r.lease_owner ?? '');
    return pid === null ? [] : [pid];
  });
}

/**
 * The pid in a lease owner id: `runtime-<pid>-<nonce>`, `host:pid:machine:nonce` or `host:pid:start:machine:nonce`;
 * null for other actors.
 */
export function pidOfOwner(owner: string): number | null {
  const pid = /^runtime-(\d+)-/.exec(owner)?.[1] ?? /^[^:]+:(\d+)(?::[^:]+){2,3}$/.exec(owner)?.[1];
  return pid === undefined ? null : Number(pid);
}
