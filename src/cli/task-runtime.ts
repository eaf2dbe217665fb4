import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { agentForModel } from '../agent/index.ts';
import { createRuntime } from '../durable/index.ts';
import { CodecallError } from '../errors/index.ts';
import { createEgress } from '../egress/index.ts';
import type { ModelConfig } from '../model/index.ts';
import { availableDrivers, typeScriptLowering } from '../sandbox/index.ts';
import type { SandboxDriver, TaskRecord, TaskStore, ToolDefinition } from '../spec/index.ts';
import { ToolRegistry } from '../tools/index.ts';
import { loadToolsModule } from '../tools/load-tools-module.ts';
import { openTaskDb } from './task-db.ts';
import type { PostgresRefusal } from './task-db.ts';
import { rememberedTools } from './remembered-tools.ts';
import { connectMcpServers } from '../mcp/index.ts';
import type { McpServers } from '../mcp/index.ts';
import { hasMcp, mcpServersOf, rememberedMcp } from './mcp-options.ts';
import type { McpFlags } from './mcp-options.ts';
import type { Runtime } from '../api/index.ts';

export interface CliRuntime {
  readonly runtime: Runtime;
  readonly store: TaskStore;
  /** The tools module this runtime serves (absolute): `--tools`, else the one remembered with the task; or null. */
  readonly toolsModule: string | null;
  /** The MCP servers this runtime serves: the flags given, else (with `toolsOf`) the ones remembered with the task. */
  readonly mcp: McpFlags;
  /** The tools its programs may call (the module's, then the MCP servers'); none unless it `runs`. */
  readonly tools: readonly ToolDefinition[];
  close(): Promise<void>;
}

/** CODECALL_LEASE_MS, as `serve` reads it: how long a lease this process takes lasts unless renewed. */
function leaseMsFrom(env: Readonly<Record<string, string | undefined>> | undefined): number | undefined {
  const text = env?.CODECALL_LEASE_MS;
  if (text === undefined || text === '') return undefined;
  const ms = Number(text);
  if (!Number.isInteger(ms) || ms < 100 || ms > 600_000) {
    throw new CodecallError('INVALID_ARGUMENT', 'CODECALL_LEASE_MS must be an integer from 100 to 600000');
  }
  return ms;
}

/**
 * The tools module a command runs `taskId` with when no --tools is given: the one remembered with the task. One
 * that no longer exists is NOT_FOUND naming it (running without it would pause the task with changed tools).
 */
function rememberedFor(task: TaskRecord | null): string | null {
  const path = task ? rememberedTools(task.input.metadata) : null;
  if (task === null || path === null) return null;
  if (!existsSync(path)) {
    throw new CodecallError(
      'NOT_FOUND',
      `the tools module task ${task.id} was started with, ${path}, no longer exists: give --tools MODULE`,
      { details: { task_id: task.id, tools_module: path } },
    );
  }
  return path;
}

/**
 * A runtime over the --db file for one CLI command. Only a command that runs code (`runs`) starts a sandbox
 * driver and loads the tools: `--tools` if given, else (with `toolsOf`) the module remembered with that task; the
 * others just steer tasks through the store. Its lease owner id names this process (host, pid, start time), so
 * a later command on this machine takes its tasks over at once if it dies.
 */
export async function openCliRuntime(options: {
  db: string;
  mustExist: boolean;
  runs: boolean;
  /**
   * The runtime's loop runs the tasks (`runtime.start()`, as `codecall mcp` does): a task whose tool's service was
   * down runs again by itself (`toolUnavailableRetries`). Otherwise (one run here, `exec --db`, `tasks resume`) it
   * pauses `needs_attention` at once, as before, with the command to resume it.
   */
  loops?: boolean;
  tools?: string | undefined;
  /** The task whose remembered tools module to load when `tools` is not given. */
  toolsOf?: string;
  /** The model of instruction tasks; without one they fail with MODEL_NOT_CONFIGURED. */
  model?: ModelConfig | null;
  /** CODECALL_LEASE_MS and CODECALL_EGRESS_ALLOW_PRIVATE are read from here. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Programs' fetch may reach loopback and private addresses (`--allow-private-net`). */
  allowPrivateNet?: boolean;
  /** MCP servers whose tools serve beside the module's (`--mcp`, `--mcp-config`; ADR 0047). */
  mcp?: McpFlags;
  /** What a PostgreSQL --db is told (the command's own name; default: tasks, exec and run). */
  postgres?: PostgresRefusal;
  /** Lines for the operator (a sandbox that did not get ready), e.g. stderr. */
  log?: (line: string) => void;
  /** Tools served beside the module's and the MCP servers' (a command's own, e.g. Toolformer's steps), made from them. */
  moreTools?: (tools: readonly ToolDefinition[]) => readonly ToolDefinition[];
  /** Wraps each sandbox driver (a command's own handling of its programs' results, e.g. Toolformer's artifacts). */
  wrapDriver?: (driver: SandboxDriver) => SandboxDriver;
}): Promise<CliRuntime> {
  const leaseMs = leaseMsFrom(options.env);
  // An explicit module is loaded before the database is opened: a bad one is a usage error that creates nothing.
  let tools = options.runs && options.tools !== undefined ? await loadToolsModule(options.tools) : [];
  let toolsModule = options.runs && options.tools !== undefined ? resolve(options.tools) : null;
  const store = await openTaskDb(options.db, options.mustExist, {
    ...(options.postgres === undefined ? {} : { postgres: options.postgres }),
  });
  try {
    if (options.runs && toolsModule === null && options.toolsOf !== undefined) {
      toolsModule = rememberedFor(await store.getTask(options.toolsOf));
      if (toolsModule !== null) tools = await loadToolsModule(toolsModule);
    }
  } catch (e) {
    await store.close();
    throw e;
  }
  let mcpFlags: McpFlags = options.mcp ?? {};
  let mcp: McpServers | null = null;
  if (options.runs) {
    try {
      if (!hasMcp(mcpFlags) && options.toolsOf !== undefined) {
        mcpFlags = rememberedMcp((await store.getTask(options.toolsOf))?.input.metadata) ?? {};
      }
      if (hasMcp(mcpFlags)) {
        mcp = await connectMcpServers({ servers: await mcpServersOf(mcpFlags) });
        tools = [...tools, ...mcp.tools];
      }
    } catch (e) {
      await store.close();
      throw e;
    }
  }
  // A CLI runs a task or two: one warm VM or interpreter each.
  const started: SandboxDriver[] = options.runs
    ? (await availableDrivers({ quickjs: { warmVmsPerWorker: 1 }, python: { warm: 1 } })).drivers
    : [];
  const wrap = options.wrapDriver;
  const drivers = wrap === undefined ? started : started.map((d) => wrap(d));
  const registry = new ToolRegistry(
    options.moreTools === undefined ? tools : [...tools, ...options.moreTools(tools)],
  );
  const model = options.model ?? null;
  const runtime = createRuntime({
    store,
    drivers,
    tools: registry,
    // The sandbox has no network: tasks with network_access fetch through this (public addresses unless told).
    egress: createEgress({
      allowPrivate:
        options.allowPrivateNet === true ||
        /^(1|true|yes|on)$/i.test(options.env?.CODECALL_EGRESS_ALLOW_PRIVATE ?? ''),
    }),
    ...(leaseMs === undefined ? {} : { leaseMs }),
    ...(options.loops === true ? {} : { toolUnavailableRetries: 0 }),
    ...(options.log ? { log: options.log } : {}),
    agent: agentForModel(model, registry.definitions, { lowering: typeScriptLowering }),
  });
  return {
    runtime,
    store,
    toolsModule,
    mcp: mcpFlags,
    tools: registry.definitions,
    async close() {
      await runtime.close();
      await Promise.all(drivers.map((d) => d.close()));
      await mcp?.close();
      await store.close();
    },
  };
}

export async function withCliRuntime<T>(
  options: Parameters<typeof openCliRuntime>[0],
  fn: (cli: CliRuntime) => Promise<T>,
): Promise<T> {
  const cli = await openCliRuntime(options);
  try {
    return await fn(cli);
  } finally {
    await cli.close();
  }
}
