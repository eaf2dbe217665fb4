import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { inspect } from 'node:util';
import { CodecallError } from '../errors/index.ts';
import { createPythonDriver, createQuickJsDriver, probePython } from '../sandbox/index.ts';
import type {
  ExecutionLimits,
  ExecutionResult,
  SandboxDriver,
  ToolDefinition,
  WorkspaceFile,
} from '../spec/index.ts';
import { runProgram } from '../tools/index.ts';
import { runTaskHere } from './durable-exec.ts';
import { inputFiles, languageOfFile } from './program-files.ts';
import { toJsonView } from '../codec/index.ts';
import { loadToolsModule } from '../tools/load-tools-module.ts';
import { integerOption, positiveOption } from './number-options.ts';
import { withCliRuntime } from './task-runtime.ts';
import type { CliIo } from './cli-io.ts';

export interface ExecCommandOptions {
  tools?: string;
  timeout?: string;
  cpu?: string;
  memory?: string;
  seed?: string;
  json?: boolean;
  /** Python: the top-level modules the program may import (comma-separated). */
  allowedLibraries?: string;
  /** Python: let the program start processes. */
  allowSubprocesses?: boolean;
  /** Input files, placed in the program's working directory under their base names. */
  file?: string[];
  /** Where to write the files the program leaves in its working directory. */
  artifacts?: string;
  /** Run as a durable task stored in this SQLite file. */
  db?: string;
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

/** `codecall exec FILE`: runs a .js/.ts program in the quickjs sandbox, a .py one in the python sandbox. */
export async function execCommand(file: string, options: ExecCommandOptions, io: CliIo): Promise<number> {
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
  const files = await inputFiles(options.file ?? []);
  const constraints = {
    ...(allowedLibraries ? { allowedLibraries } : {}),
    ...(options.allowSubprocesses ? { allowSubprocesses: true } : {}),
  };
  if (options.db !== undefined) {
    const dbPath = options.db;
    return withCliRuntime(
      { db: dbPath, mustExist: false, runs: true, tools: options.tools },
      async ({ runtime }) => {
        const task = await runtime.submit({
          code,
          language,
          ...(seed === undefined ? {} : { seed }),
          ...(Object.keys(limits).length > 0 ? { limits } : {}),
          ...(Object.keys(constraints).length > 0 ? { constraints } : {}),
          ...(files.length > 0
            ? { files: files.map((f) => ({ name: f.name, data: Buffer.from(f.data).toString('base64') })) }
            : {}),
        });
        return runTaskHere({ runtime, taskId: task.task_id, dbPath, json: options.json === true }, io);
      },
    );
  }

  const tools: ToolDefinition[] = options.tools ? await loadToolsModule(options.tools) : [];
  const driver = language === 'python' ? await pythonDriver() : createQuickJsDriver({ warmVmsPerWorker: 1 });
  const controller = new AbortController();
  const onSigint = (): void => controller.abort(new CodecallError('INTERRUPTED', 'interrupted by SIGINT'));
  process.once('SIGINT', onSigint);
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
      signal: controller.signal,
      ...(seed === undefined ? {} : { seed }),
      onLog: (entry) => io.stderr(`${entry.level === 'log' ? '' : `[${entry.level}] `}${entry.message}\n`),
    });
  } finally {
    process.off('SIGINT', onSigint);
    await driver.close();
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
        error: result.status === 'failed' ? { code: result.error.code, message: result.error.message } : null,
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
    const where = result.error.line === undefined ? '' : ` (line ${result.error.line})`;
    io.stderr(`failed: ${result.error.code}: ${result.error.message}${where}\n`);
  }
  return result.status === 'succeeded' ? 0 : 1;
}
