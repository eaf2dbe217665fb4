import type { ExecutionHost, GuestToolBinding, LogEntry } from '../spec/index.ts';
import type { ManifestTools } from './tool-manifest.ts';

/** The tools a runner serves (a ToolRegistry fits). */
export interface RunnerTools extends ManifestTools {
  readonly bindings: readonly GuestToolBinding[];
  /** `onLog` is passed only when the runner has one; `onToolLog` takes what tools log (`ctx.log`). */
  host(options?: { onLog?: (entry: LogEntry) => void; onToolLog?: (entry: LogEntry) => void }): ExecutionHost;
}
