import { rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCodecallMcpServer, runtimeTaskBackend } from '../mcpserver/index.ts';
import type { ExecutionLimits, Principal } from '../spec/index.ts';
import type { CliIo } from './cli-io.ts';
import { positiveOption } from './number-options.ts';
import { onFirstSigint } from './sigint.ts';
import { openCliRuntime } from './task-runtime.ts';
import { toolsMetadata } from './remembered-tools.ts';
import { mcpMetadata } from './mcp-options.ts';

export interface McpCommandOptions {
  tools?: string;
  /** MCP servers whose tools programs call (`NAME=COMMAND [ARGS...]` or `NAME=URL`, ADR 0047). */
  mcp?: string[];
  mcpConfig?: string;
  /** The gateway's spelling of `--mcp`: upstream servers reached only through the code-mode pair. */
  upstream?: string[];
  /** Keep tasks in this SQLite file (else in a temporary file, removed when the session ends). */
  db?: string;
  timeout?: string;
  cpu?: string;
  memory?: string;
}

/** Who calls over stdio: the local user, who owns the database (as `codecall tasks` acts). */
const LOCAL_USER: Principal = Object.freeze({ tenant: 'default', role: 'admin', keyId: null, actor: 'mcp' });

/**
 * `codecall mcp`: codecall as an MCP server on stdio (ADR 0049). stdout carries the protocol only: every log line,
 * the tools' console output included, goes to stderr. Ends when the client closes stdin, or on SIGINT/SIGTERM.
 */
export async function mcpCommand(
  options: McpCommandOptions,
  io: CliIo,
  env: Readonly<Record<string, string | undefined>>,
): Promise<number> {
  // A tools module's console.log would corrupt the protocol: the console writes to stderr here.
  for (const level of ['log', 'info', 'debug'] as const) console[level] = console.error;
  const limits: Partial<ExecutionLimits> = {};
  if (options.timeout !== undefined) limits.timeoutMs = positiveOption('--timeout', options.timeout) * 1000;
  if (options.cpu !== undefined) limits.cpuMs = Math.ceil(positiveOption('--cpu', options.cpu) * 1000);
  if (options.memory !== undefined) {
    limits.memoryBytes = positiveOption('--memory', options.memory) * 1024 * 1024;
  }
  const upstream = options.upstream ?? [];
  const mcp = {
    mcp: [...(options.mcp ?? []), ...upstream],
    ...(options.mcpConfig === undefined ? {} : { mcpConfig: options.mcpConfig }),
  };
  // Without --db the session's tasks go to a temporary SQLite file, not memory: a long session's ended tasks cost
  // disk, never the process's memory (SQLite's page cache is bounded). Removed when the session ends (not after a
  // SIGKILL: it is under the system's temporary directory).
  const scratch = options.db === undefined ? await mkdtemp(join(tmpdir(), 'codecall-mcp-')) : null;
  const removeScratch = async (): Promise<void> => {
    if (scratch !== null) await rm(scratch, { recursive: true, force: true });
  };
  // Also when the process is ended while it stops (a client's transport sends SIGTERM after 2 s): the file goes.
  const removeNow = (): void => {
    if (scratch !== null) rmSync(scratch, { recursive: true, force: true });
  };
  if (scratch !== null) process.once('exit', removeNow);
  const db = options.db ?? join(scratch ?? '', 'tasks.db');
  const cli = await openCliRuntime({
    db,
    mustExist: false,
    runs: true,
    loops: true,
    log: (line) => io.stderr(`codecall mcp: ${line}\n`),
    tools: options.tools,
    env,
    mcp,
    postgres: {
      feature: 'codecall mcp --db',
      instead: 'run `codecall serve --db URL` and point the MCP client at its `POST /mcp` endpoint',
    },
  }).catch(async (e: unknown) => {
    await removeScratch();
    throw e;
  });
  try {
    // A gateway (`--upstream`) shows its client the code-mode pair alone; with --db, tasks are worth driving.
    const taskTools = upstream.length === 0 || options.db !== undefined;
    const server = await createCodecallMcpServer({
      tools: cli.tools,
      tasks: runtimeTaskBackend({ runtime: cli.runtime, store: cli.store, principal: LOCAL_USER }),
      taskTools,
      ...(Object.keys(limits).length > 0 ? { limits } : {}),
      // As exec --db does: `codecall tasks resume|approve ... --db` find the tools module and servers again.
      metadata: { ...toolsMetadata(options.tools), ...mcpMetadata(mcp) },
    });
    const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
    const transport = new StdioServerTransport();
    const ended = new Promise<string>((resolve) => {
      process.stdin.once('end', () => resolve('stdin closed'));
      transport.onclose = () => resolve('connection closed');
      process.once('SIGTERM', () => resolve('SIGTERM'));
      onFirstSigint(() => resolve('SIGINT'));
    });
    // The claim loop runs the tasks programs become, here.
    cli.runtime.start();
    await server.connect(transport);
    io.stderr(
      `codecall mcp: ${cli.tools.length} tools, ${taskTools ? 'code mode and tasks' : 'code mode only'}, tasks ${
        scratch === null ? `in ${db}` : `in ${db} (temporary: removed when this session ends)`
      }; serving MCP on stdio\n`,
    );
    const why = await ended;
    io.stderr(`codecall mcp: ${why}, stopping\n`);
    // A signal while it stops ends it at once (the exit handler removes a temporary file).
    const now = (code: number) => () => process.exit(code);
    process.once('SIGTERM', now(143));
    await server.close().catch(() => undefined);
  } finally {
    // Running tasks pause (shutdown): a --db task is resumed by the next runtime on the file.
    await cli.runtime.close({ pauseRunning: true, timeoutMs: 5_000 });
    await cli.close();
    await removeScratch();
  }
  return 0;
}
