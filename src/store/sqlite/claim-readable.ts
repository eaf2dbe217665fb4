import type Database from 'better-sqlite3';
import { isCodecallError } from '../../errors/index.ts';
import type { CodecallError } from '../../errors/index.ts';
import type { Lease } from '../../spec/index.ts';
import { toTaskRecord } from '../rows.ts';
import type { TaskRow } from '../rows.ts';
import { auditStatus } from './sqlite-audit.ts';
import { claimNext } from './sqlite-claim.ts';
import { prepared } from './statement-cache.ts';

/**
 * `claimNext`, but no lease is handed out for a task whose row cannot be decoded: the runner could not read it,
 * would give it up, and it would be claimed again at once, forever (starving the event loop). Such a task fails
 * in the same transaction with CHECKPOINT_CORRUPT naming the column, and the next one is claimed instead.
 */
export function claimReadable(
  db: Database.Database,
  owner: string,
  options: Parameters<typeof claimNext>[2],
  now: number,
): Lease | null {
  for (;;) {
    const lease = claimNext(db, owner, options, now);
    if (lease === null) return null;
    const problem = rowProblem(db, lease.taskId);
    if (problem === null) return lease;
    failUnreadable(db, lease, problem, now);
    if (options.taskId !== undefined) return null;
  }
}

function rowProblem(db: Database.Database, taskId: string): CodecallError | null {
  try {
    toTaskRecord(prepared(db, 'SELECT * FROM tasks WHERE id = ?').get(taskId) as TaskRow);
    return null;
  } catch (e) {
    if (isCodecallError(e) && e.code === 'CHECKPOINT_CORRUPT') return e;
    throw e;
  }
}

function failUnreadable(db: Database.Database, lease: Lease, problem: CodecallError, now: number): void {
  prepared(
    db,
    `UPDATE tasks SET status = 'failed', error = ?, lease_owner = NULL, lease_expires_at = NULL,
       requested_action = NULL, version = version + 1, updated_at = ? WHERE id = ?`,
  ).run(JSON.stringify({ code: problem.code, message: problem.message }), now, lease.taskId);
  auditStatus(
    db,
    lease.taskId,
    { from: 'running', to: 'failed', pauseReason: null, errorCode: problem.code, actor: lease.owner },
    now,
  );
}
