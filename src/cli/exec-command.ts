import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { inspect } from 'node:util';
import { CodecallError } from '../errors/index.ts';
import { createPythonDriver, createQuickJsDriver, probePython } from '../sandbox/index.ts';
import { checkLibraryPatterns, checkNetworkAccess } from '../spec/index.ts';
import { createEgress } from '../egress/index.ts';
import type {
  ExecutionLimits,
  ExecutionResult,
  SandboxDriver,
  SerializedError,
  ToolDefinition,
  WorkspaceFile,
} from '../spec/index.ts';
import { runProgram } from '../tools/index.ts';
import { pausingLine, runTaskHere, stoppedLine } from './durable-exec.ts';
import { EXIT_INTERRUPTED } from './exit-codes.ts';
import { toolsMetadata } from './remembered-tools.ts';
import { interruptOnSigint, onFirstSigint } from './sigint.ts';
import { inputFiles, languageOfFile } from './program-files.ts';
import { toJsonView } from '../codec/index.ts';
import { loadToolsModule } from '../tools/load-tools-module.ts';
import { integerOption, positiveOption } from './number-options.ts';
import { withCliRuntime } from './task-runtime.ts';
import { connectMcpServers } from '../mcp/index.ts';
import { hasMcp, mcpMetadata, mcpServersOf } from './mcp-options.ts';
import type { CliIo } from './cli-io.ts';
import { budgetsOf } from './budget-options.ts';
import type { BudgetOptions } from './budget-options.ts';

export interface ExecCommandOptions extends BudgetOptions {
  tools?: string;
  timeout?: string;
  cpu?: string;
  memory?: string;
  seed?: string;
  json?: boolean;
  /** Python: the modules the program may import (comma-separated patterns, ADR 0041). */
  allowedLibraries?: string;
  /** Python: let the program start processes. */
  allowSubprocesses?: boolean;
  /** Input files, placed in the program's working directory under their base names. */
  file?: string[];
  /** Where to write the files the program leaves in its working directory. */
  artifacts?: string;
  /** Run as a durable task stored in this SQLite file. */
  db?: string;
  /** Where the program's fetch may go: allow entries, comma-separated (`api.github.com,*.example.org`). */
  allowNet?: string;
  /** fetch may use plain http too. */
  allowHttp?: boolean;
  /** fetch may reach loopback, private and link-local addresses (local services; the operator's choice). */
  allowPrivateNet?: boolean;
  /** MCP servers, `NAME=COMMAND [ARGS...]` or `NAME=URL` each (ADR 0047). */
  mcp?: string[];
  /** A JSON file of MCP servers. */
  mcpConfig?: string;
}

async function saveArtifacts(dir: string, artifacts: readonly WorkspaceFile[]): Promise<void> {
  for (const a of artifacts) {
    const target = join(dir, a.name);
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, a.data);
  }
}

/** The python sandbox, or SANDBOX_UNAVAILABLE saying why it cannot run here and how to fix that. */
async function pythonDriver(): Promise<SandboxDriver> {
  const probe = await probePython();
  if (!probe.ok) throw new CodecallError('SANDBOX_UNAVAILABLE', probe.reason);
  return createPythonDriver({ warm: 0, probe });
}

/** The program and what it runs with, read and checked from the command line. */
async function programOf(file: string, options: ExecCommandOptions) {
  const language = languageOfFile(file);
  let code: string;
  try {
    code = await readFile(file, 'utf8');
  } catch {
    throw new CodecallError('NOT_FOUND', `program not found: ${file}`);
  }
  const limits: Partial<ExecutionLimits> = {};
  if (options.timeout !== undefined) limits.timeoutMs = positiveOption('--timeout', options.timeout) * 1000;
  if (options.cpu !== undefined) limits.cpuMs = Math.ceil(positiveOption('--cpu', options.cpu) * 1000);
  if (options.memory !== undefined)
    limits.memoryBytes = positiveOption('--memory', options.memory) * 1024 * 1024;
  const seed = options.seed === undefined ? undefined : integerOption('--seed', options.seed);
  const allowedLibraries = options.allowedLibraries
    ?.split(',')
    .map((m) => m.trim())
    .filter((m) => m !== '');
  if (allowedLibraries) checkLibraryPatterns('--allowed-libraries', allowedLibraries);
  const files = await inputFiles(options.file ?? []);
  if (options.allowHttp && options.allowNet === undefined) {
    throw new CodecallError('INVALID_ARGUMENT', '--allow-http needs --allow-net HOSTS (where fetch may go)');
  }
  const networkAccess =
    options.allowNet === undefined
      ? false
      : checkNetworkAccess(
          {
            allow: options.allowNet
              .split(',')
              .map((h) => h.trim())
              .filter((h) => h !== ''),
            ...(options.allowHttp ? { allowHttp: true } : {}),
          },
          '--allow-net',
        );
  const constraints = {
    ...(allowedLibraries ? { allowedLibraries } : {}),
    ...(options.allowSubprocesses ? { allowSubprocesses: true } : {}),
  };
  // Budgets are counted from a task's journal (ADR 0044): a program run once has none to count from.
  const budgets = budgetsOf(options);
  if (budgets !== null && options.db === undefined) {
    throw new CodecallError(
      'INVALID_ARGUMENT',
      "budget flags (--max-calls, --max-cost, --tool-max-calls, --tool-max-seconds) need --db PATH: budgets are counted from a durable task's journal",
    );
  }
  return { code, language, limits, seed, files, constraints, networkAccess, budgets };
}

/** `codecall exec FILE`: runs a .js/.ts program in the quickjs sandbox, a .py one in the python sandbox. */
export async function execCommand(
  file: string,
  options: ExecCommandOptions,
  io: CliIo,
  env: Readonly<Record<string, string | undefined>> = {},
): Promise<number> {
  if (options.db !== undefined) return execStored(file, options, options.db, io, env);
  const { code, language, limits, seed, files, constraints, networkAccess } = await programOf(file, options);
  const tools: ToolDefinition[] = options.tools ? await loadToolsModule(options.tools) : [];
  const mcp = hasMcp(options) ? await connectMcpServers({ servers: await mcpServersOf(options) }) : null;
  if (mcp) tools.push(...mcp.tools);
  let driver: SandboxDriver;
  try {
    driver = language === 'python' ? await pythonDriver() : createQuickJsDriver({ warmVmsPerWorker: 1 });
  } catch (e) {
    await mcp?.close();
    throw e;
  }
  const controller = new AbortController();
  const release = onFirstSigint(() =>
    controller.abort(new CodecallError('INTERRUPTED', 'interrupted by SIGINT')),
  );
  let result: ExecutionResult;
  try {
    await driver.ready();
    result = await runProgram({
      driver,
      code,
      language,
      filename: file,
      tools,
      limits,
      ...(Object.keys(constraints).length > 0 ? { policy: constraints } : {}),
      ...(files.length > 0 ? { files } : {}),
      ...(networkAccess === false
        ? {}
        : {
            network: {
              egress: createEgress({ allowPrivate: options.allowPrivateNet === true }),
              access: networkAccess,
            },
          }),
      signal: controller.signal,
      ...(seed === undefined ? {} : { seed }),
      onLog: (entry) => io.stderr(`${entry.level === 'log' ? '' : `[${entry.level}] `}${entry.message}\n`),
    });
  } finally {
    release();
    await driver.close();
    await mcp?.close();
  }
  const artifacts = result.artifacts ?? [];
  if (options.artifacts !== undefined) await saveArtifacts(options.artifacts, artifacts);
  for (const a of artifacts) {
    io.stderr(
      `artifact ${a.name} (${a.data.byteLength} bytes)${options.artifacts ? ` saved in ${options.artifacts}` : ''}\n`,
    );
  }
  if (options.json) {
    io.stdout(
      `${JSON.stringify({
        status: result.status,
        result: result.status === 'succeeded' ? toJsonView(result.value) : null,
        logs: result.logs,
        error: result.status === 'failed' ? jsonError(result.error) : null,
        artifacts: artifacts.map((a) => ({ name: a.name, size: a.data.byteLength })),
        resources: {
          wall_ms: Math.round(result.resources.wallMs),
          tool_calls: result.resources.toolCalls,
          memory_bytes: result.resources.memoryBytes,
        },
      })}\n`,
    );
  } else if (result.status === 'succeeded') {
    io.stdout(`${inspect(result.value, { depth: 8, colors: false })}\n`);
    io.stderr(
      `succeeded in ${Math.round(result.resources.wallMs)} ms, ${result.resources.toolCalls} tool calls\n`,
    );
  } else {
    const { line, column } = result.error;
    const where =
      line === undefined ? '' : ` (line ${line}${column === undefined ? '' : `, column ${column}`})`;
    io.stderr(`failed: ${result.error.code}: ${result.error.message}${where}\n`);
    if (result.error.code === 'EGRESS_REFUSED' && options.allowNet === undefined) {
      io.stderr('hint: give the hosts fetch may reach with --allow-net (e.g. --allow-net api.example.com)\n');
    }
  }
  return result.status === 'succeeded' ? 0 : 1;
}

/**
 * `codecall exec FILE --db PATH`: stores the program as a task and runs it here. SIGINT is taken over from the
 * start: before the task is stored it stops the command with nothing stored (exit 130); once it is, it pauses the
 * task (resumable; exit 0), also while it is still queued here.
 */
async function execStored(
  file: string,
  options: ExecCommandOptions,
  dbPath: string,
  io: CliIo,
  env: Readonly<Record<string, string | undefined>>,
): Promise<number> {
  let taskId: string | null = null;
  const interrupt = interruptOnSigint(io.stderr, {
    first: () =>
      taskId === null ? 'interrupted (SIGINT): stopping before the task is stored' : pausingLine(taskId),
    second: () => (taskId === null ? 'stopped at once (second SIGINT)' : stoppedLine(taskId, dbPath)),
  });
  try {
    const { code, language, limits, seed, files, constraints, networkAccess, budgets } = await programOf(
      file,
      options,
    );
    const allConstraints = {
      ...constraints,
      ...(networkAccess === false ? {} : { networkAccess }),
      ...(budgets === null ? {} : { budgets }),
    };
    return await withCliRuntime(
      {
        db: dbPath,
        mustExist: false,
        runs: true,
        tools: options.tools,
        env,
        ...(options.allowPrivateNet ? { allowPrivateNet: true } : {}),
        mcp: options,
      },
      async ({ runtime, toolsModule }) => {
        if (interrupt.signal.aborted) {
          io.stderr('interrupted (SIGINT) before the task was stored: no task was created\n');
          return EXIT_INTERRUPTED;
        }
        const task = await runtime.submit({
          code,
          language,
          ...(seed === undefined ? {} : { seed }),
          ...(Object.keys(limits).length > 0 ? { limits } : {}),
          ...(Object.keys(allConstraints).length > 0 ? { constraints: allConstraints } : {}),
          ...(files.length > 0
            ? { files: files.map((f) => ({ name: f.name, data: Buffer.from(f.data).toString('base64') })) }
            : {}),
          // The tools module is remembered with the task: `tasks resume|approve ... --db` find it.
          ...(toolsModule === null && !hasMcp(options)
            ? {}
            : {
                metadata: {
                  ...(toolsModule === null ? {} : toolsMetadata(toolsModule)),
                  ...mcpMetadata(options),
                },
              }),
        });
        taskId = task.task_id;
        io.stderr(`task ${taskId} stored in ${dbPath}; it runs here (Ctrl-C pauses it)\n`);
        // A SIGINT while it was being stored: said now that the task has an id; the run pauses it unrun.
        if (interrupt.signal.aborted) io.stderr(`${pausingLine(taskId)}\n`);
        return runTaskHere(
          {
            runtime,
            taskId,
            dbPath,
            json: options.json === true,
            tools: toolsModule,
            signal: interrupt.signal,
          },
          io,
        );
      },
    );
  } finally {
    interrupt.release();
  }
}

/**
 * A failure as `exec --json` prints it: its code and message, and what the guest knows of it (both languages use
 * these names): the exception's class (`name`) and where it was raised in the program as written (`line`, and
 * `column` where the driver tells it; 1-based).
 */
function jsonError(error: SerializedError & { line?: number; column?: number }): Record<string, unknown> {
  return {
    code: error.code,
    message: error.message,
    ...(error.name === undefined ? {} : { name: error.name }),
    ...(error.line === undefined ? {} : { line: error.line }),
    ...(error.column === undefined ? {} : { column: error.column }),
  };
}
