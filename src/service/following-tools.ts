import { toolManifestHash } from '../durable/index.ts';
import type { RunnerTools } from '../durable/index.ts';
import type { ExecutionHost, GuestToolBinding, LogEntry, ToolDefinition } from '../spec/index.ts';
import { ToolRegistry } from '../tools/index.ts';

/** Earlier tool sets kept for the tasks that began with them; a task of an older one needs attention to resume. */
const MAX_GENERATIONS = 16;

/**
 * The service's tools when an MCP server may change its list (`tools/list_changed`, ADR 0047): new tasks get the
 * latest set, and a task whose journal's manifest names an earlier set keeps that one (`forManifest`), so a running
 * or paused task's world never changes under it. The last MAX_GENERATIONS sets are kept; a task begun with an
 * older one meets the manifest check (needs_attention, INCOMPATIBLE_CHECKPOINT) as after a restart.
 */
export class FollowingTools implements RunnerTools {
  #current: ToolRegistry;
  #definitions: readonly ToolDefinition[];
  /** By manifest hash, oldest first. */
  readonly #generations = new Map<string, ToolRegistry>();

  constructor(tools: readonly ToolDefinition[]) {
    this.#current = new ToolRegistry(tools);
    this.#definitions = this.#current.definitions;
    this.#generations.set(toolManifestHash(this.#current), this.#current);
  }

  get bindings(): readonly GuestToolBinding[] {
    return this.#current.bindings;
  }

  /** Every tool of the latest set, in definition order. */
  get definitions(): readonly ToolDefinition[] {
    // The same array until the set changes (GET /api/v1/tools builds its answer again only then).
    return this.#definitions;
  }

  get(namespace: string, name: string): ToolDefinition | undefined {
    return this.#current.get(namespace, name);
  }

  host(options?: {
    onLog?: (entry: LogEntry) => void;
    onToolLog?: (entry: LogEntry) => void;
  }): ExecutionHost {
    return this.#current.host(options);
  }

  forManifest(toolsHash: string): RunnerTools | undefined {
    const found = this.#generations.get(toolsHash);
    return found === this.#current ? undefined : found;
  }

  /**
   * Serves `tools` to the tasks created from now on. A set the registry refuses (two tools of one name) throws
   * and the current set stays.
   */
  replace(tools: readonly ToolDefinition[]): void {
    const next = new ToolRegistry(tools);
    const hash = toolManifestHash(next);
    // A set seen before (a tool removed, then added back) is the same world: its tasks and new ones share it.
    this.#generations.delete(hash);
    this.#generations.set(hash, next);
    this.#current = next;
    this.#definitions = next.definitions;
    while (this.#generations.size > MAX_GENERATIONS) {
      const oldest = this.#generations.keys().next().value as string;
      this.#generations.delete(oldest);
    }
  }
}
