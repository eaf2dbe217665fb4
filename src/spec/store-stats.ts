import type { PauseReason, TaskStatus } from './task.ts';

/**
 * What the operator's view reads of a store (`TaskStore.readStats`, ADR 0054): bounded reads, whatever the size
 * of the database. The counts of unended tasks are exact (index counts); what ended in the window and the tool
 * calls are the newest ones up to the store's bounds, and `capped` says when a bound was reached.
 */
export interface StoreStats {
  /** Unended tasks, by tenant, status and (for paused ones) pause reason. */
  readonly active: readonly ActiveCount[];
  /** Tasks whose last status change, an end, came at or after `since`; newest first. */
  readonly ended: readonly EndedTask[];
  /** Tool calls that ran and completed at or after `since` in the journals read (not replayed, carried or refused). */
  readonly toolCalls: readonly ToolCallSample[];
  readonly capped: { readonly ended: boolean; readonly toolCalls: boolean };
}

export interface ActiveCount {
  readonly tenant: string;
  readonly status: Extract<TaskStatus, 'pending' | 'running' | 'paused'>;
  readonly pauseReason: PauseReason | null;
  readonly count: number;
}

export interface EndedTask {
  readonly tenant: string;
  readonly status: Extract<TaskStatus, 'succeeded' | 'failed' | 'cancelled'>;
  /** The failure's stable code (failed tasks); null otherwise or when the row's error cannot be read. */
  readonly errorCode: string | null;
  /** Epoch ms. */
  readonly createdAt: number;
  readonly endedAt: number;
}

export interface ToolCallSample {
  readonly tool: string;
  /** From its intent to its outcome, as journaled. */
  readonly ms: number;
  readonly ok: boolean;
  /** Epoch ms of its outcome. */
  readonly at: number;
}

export interface StatsQuery {
  /** Epoch ms: the window's start. */
  readonly since: number;
  /** One tenant's tasks; all when absent. */
  readonly tenant?: string;
}
