import type { ExecutionHost, GuestToolBinding, LogEntry, ToolDefinition } from '../spec/index.ts';
import type { ManifestTools } from './tool-manifest.ts';

/** The tools a runner serves (a ToolRegistry fits). */
export interface RunnerTools extends ManifestTools {
  readonly bindings: readonly GuestToolBinding[];
  /** Every tool, as defined: what an instruction task's prompt lists (absent: the agent's own list). */
  readonly definitions?: readonly ToolDefinition[];
  /** `onLog` is passed only when the runner has one; `onToolLog` takes what tools log (`ctx.log`). */
  host(options?: { onLog?: (entry: LogEntry) => void; onToolLog?: (entry: LogEntry) => void }): ExecutionHost;
  /**
   * The tools a task whose journal's manifest has this tools hash runs with, when they differ from these and are
   * still served (a tool list that changed while the service ran: a task keeps the world it began in, ADR 0047);
   * undefined: these.
   */
  forManifest?(toolsHash: string): RunnerTools | undefined;
}
