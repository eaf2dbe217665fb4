import type { TaskStatus } from '../spec/index.ts';

/** A request nobody answers here (a task run by another process) is forgotten after this long. */
const FORGET_AFTER_MS = 60 * 60 * 1000;

interface Requested {
  readonly action: 'pause' | 'resume';
  readonly at: number;
}

/**
 * Pause latency (asked -> paused) and resume latency (asked -> running again), per task, from the runtime's
 * control hook and its status events. A refused request is dropped, so a later unrelated status is not counted.
 */
export class ControlLatency {
  private readonly requests = new Map<string, Requested>();

  constructor(
    private readonly observe: (action: 'pause' | 'resume', seconds: number) => void,
    private readonly now: () => number = () => performance.now(),
  ) {}

  requested(taskId: string, action: 'pause' | 'resume', accepted: Promise<unknown>): void {
    this.forgetOld();
    const entry = { action, at: this.now() };
    // Re-inserted so the map stays in request order (forgetOld stops at the first recent one).
    this.requests.delete(taskId);
    this.requests.set(taskId, entry);
    accepted.then(
      () => undefined,
      () => {
        if (this.requests.get(taskId) === entry) this.requests.delete(taskId);
      },
    );
  }

  onStatus(taskId: string, status: TaskStatus): void {
    const entry = this.requests.get(taskId);
    if (!entry) return;
    const done = entry.action === 'pause' ? 'paused' : 'running';
    // A resumed task passes through pending on its way to running; any other status ends the wait unanswered.
    if (entry.action === 'resume' && status === 'pending') return;
    this.requests.delete(taskId);
    if (status === done) this.observe(entry.action, (this.now() - entry.at) / 1000);
  }

  private forgetOld(): void {
    const before = this.now() - FORGET_AFTER_MS;
    for (const [taskId, entry] of this.requests) {
      if (entry.at >= before) return;
      this.requests.delete(taskId);
    }
  }
}
