import { readFile } from 'node:fs/promises';
import { CodecallError } from '../errors/index.ts';
import { modelConfigFrom, noModelConfiguredError } from '../model/index.ts';
import { AGENT_MODES, GUEST_LANGUAGES, isGuestLanguage } from '../spec/index.ts';
import type { AgentMode } from '../spec/index.ts';
import { agentProgress } from './agent-progress.ts';
import { runTaskHere } from './durable-exec.ts';
import { toolsMetadata } from './remembered-tools.ts';
import type { CliIo } from './cli-io.ts';
import { integerOption } from './number-options.ts';
import { inputFiles } from './program-files.ts';
import { withCliRuntime } from './task-runtime.ts';
import { budgetsOf } from './budget-options.ts';
import type { BudgetOptions } from './budget-options.ts';
import { hasMcp, mcpMetadata } from './mcp-options.ts';

export interface RunCommandOptions extends BudgetOptions {
  tools?: string;
  provider?: string;
  baseUrl?: string;
  model?: string;
  apiKey?: string;
  mode?: string;
  language?: string;
  /** Input files, placed in the working directory of the programs the model writes (Python). */
  file?: string[];
  maxSteps?: string;
  /** A JSON Schema file the final answer must match (issue 23); the answer is then printed as JSON. */
  answerSchema?: string;
  db?: string;
  json?: boolean;
  /** MCP servers, `NAME=COMMAND [ARGS...]` or `NAME=URL` each (ADR 0047). */
  mcp?: string[];
  /** A JSON file of MCP servers. */
  mcpConfig?: string;
}

/**
 * `codecall run "INSTRUCTION"`: a model writes and runs the code, step by step, shown as it happens; the answer
 * goes to stdout. With --db the task is durable (SIGINT pauses it; `codecall tasks resume` goes on), else it
 * lives in memory for this run only.
 */
export async function runCommand(
  instruction: string,
  options: RunCommandOptions,
  io: CliIo,
  env: Readonly<Record<string, string | undefined>>,
): Promise<number> {
  // The flags first: a typo is told before the model's configuration is.
  const budgets = budgetsOf(options);
  const model = modelConfigFrom(env, {
    ...(options.provider === undefined ? {} : { provider: options.provider }),
    ...(options.baseUrl === undefined ? {} : { baseUrl: options.baseUrl }),
    ...(options.model === undefined ? {} : { model: options.model }),
    ...(options.apiKey === undefined ? {} : { apiKey: options.apiKey }),
  });
  if (!model) throw noModelConfiguredError();
  const mode = (options.mode ?? 'code') as AgentMode;
  if (!AGENT_MODES.includes(mode)) {
    throw new CodecallError('INVALID_ARGUMENT', `--mode must be one of ${AGENT_MODES.join(', ')}`);
  }
  const language = options.language ?? 'javascript';
  if (!isGuestLanguage(language)) {
    throw new CodecallError('INVALID_ARGUMENT', `--language must be one of ${GUEST_LANGUAGES.join(', ')}`);
  }
  // Only a Python program has a working directory: a JavaScript one is told it has no file system.
  if ((options.file ?? []).length > 0 && language !== 'python') {
    throw new CodecallError(
      'INVALID_ARGUMENT',
      '--file puts input files in the working directory of Python programs: add --language python',
    );
  }
  const files = await inputFiles(options.file ?? []);
  const maxSteps =
    options.maxSteps === undefined
      ? undefined
      : integerOption('--max-steps', options.maxSteps, { min: 1, max: 100 });
  const answerSchema =
    options.answerSchema === undefined ? undefined : await answerSchemaFile(options.answerSchema);
  const dbPath = options.db ?? ':memory:';
  return withCliRuntime(
    { db: dbPath, mustExist: false, runs: true, tools: options.tools, model, env, mcp: options },
    async ({ runtime, toolsModule }) => {
      const task = await runtime.submit({
        instruction,
        mode,
        language,
        ...(maxSteps === undefined ? {} : { maxSteps }),
        ...(answerSchema === undefined ? {} : { answerSchema }),
        ...(budgets === null ? {} : { constraints: { budgets } }),
        // Remembered with the task: `tasks resume ... --db` finds it.
        ...(toolsModule === null && !hasMcp(options)
          ? {}
          : {
              metadata: {
                ...(toolsModule === null ? {} : toolsMetadata(toolsModule)),
                ...mcpMetadata(options),
              },
            }),
        ...(files.length > 0
          ? { files: files.map((f) => ({ name: f.name, data: Buffer.from(f.data).toString('base64') })) }
          : {}),
      });
      io.stderr(
        `task ${task.task_id}: ${mode === 'code' ? 'code' : 'function-calling'} mode, model ${model.model}\n`,
      );
      const progress = agentProgress((line) => io.stderr(`${line}\n`));
      const code = await runTaskHere(
        { runtime, taskId: task.task_id, dbPath, json: options.json === true, progress, tools: toolsModule },
        io,
      );
      if (options.db === undefined && (await runtime.get(task.task_id))?.status === 'paused') {
        io.stderr(
          'this task lived in memory and ends with this process: run with --db PATH to resume it later\n',
        );
      }
      return code;
    },
  );
}

/** `--answer-schema FILE`: a JSON object read from a file (what it may hold is the submit's check). */
async function answerSchemaFile(path: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `--answer-schema: cannot read ${path}: ${(e as Error).message}`,
    );
  }
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch (e) {
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `--answer-schema: ${path} is not JSON: ${(e as Error).message}`,
    );
  }
}
