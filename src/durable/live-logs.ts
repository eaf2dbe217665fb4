import type { LogEntry } from '../spec/index.ts';
import type { RuntimeEvent } from '../api/index.ts';

/** Lines kept per running task, and their bytes: a stream opened late gets the recent ones, not all. */
export const LIVE_LOG_LINES = 1000;
export const LIVE_LOG_BYTES = 256 * 1024;

/**
 * What each task running in this process has printed in its current run, until the run ends or pauses (the
 * task record has the lines then): a stream opened while a task runs starts with them.
 */
export class LiveLogs {
  private readonly byTask = new Map<string, { lines: LogEntry[]; bytes: number }>();

  observe(event: RuntimeEvent): void {
    if (event.type === 'status') {
      // A new run starts empty; an ended or paused one has its lines in the task record.
      this.byTask.delete(event.taskId);
      return;
    }
    if (event.type !== 'log') return;
    let kept = this.byTask.get(event.taskId);
    if (!kept) this.byTask.set(event.taskId, (kept = { lines: [], bytes: 0 }));
    kept.lines.push({ level: event.level, message: event.message });
    kept.bytes += event.message.length;
    while (kept.lines.length > LIVE_LOG_LINES || (kept.bytes > LIVE_LOG_BYTES && kept.lines.length > 1)) {
      kept.bytes -= kept.lines.shift()?.message.length ?? 0;
    }
  }

  of(taskId: string): readonly LogEntry[] {
    return this.byTask.get(taskId)?.lines ?? [];
  }
}
