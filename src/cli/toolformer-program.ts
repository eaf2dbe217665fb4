import type { Command } from 'commander';
import type { CliIo } from './cli-io.ts';
import { addMcpOptions } from './mcp-flags.ts';
import { collect } from './repeatable.ts';
import type { RunCommand } from './tasks-program.ts';
import type { ToolformerScoreOptions } from './toolformer-command.ts';
import type { ToolformerRunOptions } from './toolformer-run-command.ts';
import type { ToolformerSampleOptions } from './toolformer-sample-command.ts';

/** `codecall toolformer sample|run|score` (ADR 0052); each command's module is imported when it runs. */
export function registerToolformerCommands(
  program: Command,
  context: { io: CliIo; run: RunCommand; env: Readonly<Record<string, string | undefined>> },
): void {
  const { io, run, env } = context;
  const toolformer = program
    .command('toolformer')
    .description('Toolformer (ADR 0052): tool-use training data from plain text, scored by a model');
  const modelFlags = (command: Command): Command =>
    command
      .requiredOption('--tool <name>', 'a tool to sample calls for (repeatable)', collect, [])
      .option(
        '--prompt <tool=file>',
        "a tool's few-shot prompt, holding {input} (default: the paper's for Calculator and QA)",
        collect,
        [],
      )
      .option(
        '--provider <name>',
        'vllm (default), llamacpp or openai: a completions server that echoes log-probabilities',
      )
      .option('--base-url <url>', 'the completions server, up to its /v1 (else OPENAI_BASE_URL)')
      .option('--model <name>', 'the model to sample and score with')
      .option(
        '--api-key <key>',
        'the server key (else OPENAI_API_KEY). A flag is visible in `ps`: prefer the environment',
      )
      .option('--threshold <p>', 'tau_s: a position is a candidate when P([) >= p (default 0.05)')
      .option('--k <n>', 'the most likely positions per text and tool (default 5)')
      .option('--m <n>', 'calls sampled per position (default 5)')
      .option('--temperature <t>', 'sampling temperature of the calls (default 1)')
      .option('--concurrency <n>', '(text, tool) pairs worked on at once (default 4)');
  modelFlags(
    toolformer
      .command('sample')
      .description(
        'sample candidate calls into a corpus (JSONL {"text"} or one text a line); write them as JSONL',
      )
      .argument('<corpus>', 'the corpus, read as a stream')
      .requiredOption(
        '--out <file>',
        'the sampled calls (JSONL: line, tool, prefix, continuation, input, probability)',
      )
      .option('--json', 'print the counts as one JSON object'),
  ).action((file: string, options: ToolformerSampleOptions) =>
    run(async () =>
      (await import('./toolformer-sample-command.ts')).toolformerSample(file, options, io, env),
    ),
  );
  addMcpOptions(
    modelFlags(
      toolformer
        .command('run')
        .description(
          'sample, execute, score and write, as durable tasks in --db: the same command resumes a run',
        )
        .argument('<corpus>', 'the corpus (JSONL {"text"} or one text a line), read as a stream')
        .requiredOption('--db <file>', "the SQLite file of the run's tasks (one per shard)")
        .option('--tools <module>', 'a module of defineTool tools')
        .requiredOption(
          '--out <file>',
          'the kept samples in the inline form; the report and histogram go beside it',
        )
        .option(
          '--chat-out <file>',
          "the kept samples in the chat form (OpenAI's fine-tuning JSONL with tool calls)",
        )
        .option('--tau <n>', 'keep when min(L_no_call, L_same) - L_call >= tau (default 1.0)')
        .option('--shard-lines <n>', 'corpus lines per task (default 50)')
        .option('--json', 'print the report as one JSON object'),
    ),
  ).action((file: string, options: ToolformerRunOptions) =>
    run(async () => (await import('./toolformer-run-command.ts')).toolformerRun(file, options, io, env)),
  );
  toolformer
    .command('score')
    .description(
      'score candidate samples (JSONL: prefix, continuation, tool, input, result) with the completions API; write the kept ones',
    )
    .argument('<candidates>', 'a JSONL file, read as a stream')
    .requiredOption('--out <file>', 'the kept samples in the inline form (JSONL, {"text": ...})')
    .option(
      '--chat-out <file>',
      "the kept samples in the chat form (OpenAI's fine-tuning JSONL with tool calls)",
    )
    .option('--provider <name>', 'vllm (default), llamacpp or openai: a server that echoes log-probabilities')
    .option(
      '--base-url <url>',
      'the completions server, up to its /v1 (else OPENAI_BASE_URL or the provider default)',
    )
    .option('--model <name>', 'the model to score with')
    .option(
      '--api-key <key>',
      'the server key (else OPENAI_API_KEY). A flag is visible in `ps`: prefer the environment',
    )
    .option('--tau <n>', 'keep when min(L_no_call, L_same) - L_call >= tau (default 1.0)')
    .option('--concurrency <n>', 'samples scored at once, three requests each (default 4)')
    .option('--json', 'print the counts as one JSON object')
    .action((file: string, options: ToolformerScoreOptions) =>
      run(async () => (await import('./toolformer-command.ts')).toolformerScore(file, options, io, env)),
    );
}
