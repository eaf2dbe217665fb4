import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { isCodecallError } from '../errors/index.ts';
import { GUEST_LANGUAGES } from '../spec/index.ts';
import { processIo } from './cli-io.ts';
import type { CliIo } from './cli-io.ts';
import type { AuditVerifyOptions } from './audit-command.ts';
import type { AuditKeyOptions } from '../store/index.ts';
import { terminalIo } from './terminal-text.ts';
import type { ExecCommandOptions } from './exec-command.ts';
import type { DoctorOptions } from './doctor-command.ts';
import type { RunCommandOptions } from './run-command.ts';
import type { ToolsListOptions } from './tools-command.ts';
import type { McpCommandOptions } from './mcp-command.ts';
import { registerToolformerCommands } from './toolformer-program.ts';
import { DEFAULT_DB } from './serve-command.ts';
import { DEFAULT_PORT } from '../service/config.ts';
import type { ServeOptions } from './serve-command.ts';
import { EXIT_USAGE } from './exit-codes.ts';
import type { KeysCreateOptions, KeysOptions } from './keys-command.ts';
import { registerTasksCommands } from './tasks-program.ts';
import { addConfigFlags } from './serve-flags.ts';
import { addBudgetOptions } from './budget-options.ts';
import { addMcpOptions } from './mcp-flags.ts';
import { collect } from './repeatable.ts';
import type { RunCommand } from './tasks-program.ts';

export { EXIT_USAGE };

// Each command's module is imported when it runs: `codecall serve` must not wait for what `exec` loads.
const keysModule = () => import('./keys-command.ts');

/** The version in package.json (src/cli and dist/cli are both two levels below it). */
function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}

/**
 * Parses argv and runs the command; resolves the process exit code. `env` is the one place codecall reads
 * process.env: the commands get it from here (commander reads the CODECALL_URL and CODECALL_KEY fallbacks itself).
 */
export async function main(
  argv: readonly string[],
  io: CliIo = processIo(),
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<number> {
  let exitCode = 0;
  const raw = io;
  // Every command prints through terminalIo: guest text (logs, errors, results, names) cannot drive the
  // terminal; a command's --json output on stdout stays exact.
  let json = false;
  io = terminalIo(raw, () => json);
  const program = new Command('codecall')
    .description('Durable, code-based tool calling: run programs that call tools inside a sandbox.')
    .version(packageVersion(), '-V, --version', 'print the version of codecall')
    .exitOverride()
    .configureOutput({ writeOut: raw.stdout, writeErr: raw.stderr })
    .hook('preAction', (_program, command) => {
      json = command.opts<{ json?: unknown }>().json === true;
    });
  const execCli = addMcpOptions(
    program
      .command('exec')
      .description('run a .js/.ts program in the quickjs sandbox, or a .py one in the python sandbox')
      .argument('<file>', 'the program')
      .option('--tools <module>', 'a .js/.ts module whose default export is a list or record of tools'),
  )
    .option('--timeout <seconds>', 'wall-clock limit')
    .option(
      '--cpu <seconds>',
      'CPU time limit (waiting for tools is not counted; default: the wall-clock limit)',
    )
    .option('--memory <mb>', 'memory limit in MiB')
    .option('--seed <n>', "seed for Math.random (and Python's random)")
    .option(
      '--allowed-libraries <modules>',
      "Python: the modules the program may import (a,b.c,pkg.*; 'pkg.*' is pkg and its submodules)",
    )
    .option('--allow-subprocesses', 'Python: let the program start processes')
    .option(
      '--allow-net <hosts>',
      "where the program's fetch may go: host names, *.domain or IPs, each with an optional :port (a.com,*.b.org)",
    )
    .option('--allow-http', 'fetch may use plain http as well as https (with --allow-net)')
    .option(
      '--allow-private-net',
      'fetch may reach loopback, private and link-local addresses (local services; off: public addresses only)',
    )
    .option('--file <path>', 'Python: an input file in the working directory (repeatable)', collect, [])
    .option('--artifacts <dir>', 'Python: save the files the program writes into this directory')
    .option('--json', 'print one JSON object on the last line of stdout')
    .option('--db <path>', 'run as a durable task stored in this SQLite file (SIGINT pauses it)');
  addBudgetOptions(execCli)
    .addHelpText('after', '\nThe budget flags (ADR 0044) hold for a durable task: give --db with them.')
    .action(async (file: string, options: ExecCommandOptions) => {
      const { execCommand } = await import('./exec-command.ts');
      const { withCliTelemetry } = await import('./cli-telemetry.ts');
      exitCode = await withCliTelemetry(env, () => execCommand(file, options, io, env));
    });
  program
    .command('doctor')
    .description(
      'report which sandbox drivers work on this machine, and why not; and whether a PostgreSQL database answers',
    )
    .option('--json', 'print the checks as JSON')
    .option('--bwrap <path>', 'the bubblewrap binary to check (default: /usr/bin/bwrap)')
    .option(
      '--db <path|url>',
      "the database to check, as `serve` takes it (default: CODECALL_DB or the config's db); a postgres:// URL is connected to, its server and schema versions reported",
    )
    .option('--config <file>', 'the JSON config file `serve` uses (also CODECALL_CONFIG)')
    .action(async (options: DoctorOptions) => {
      const { doctorCommand } = await import('./doctor-command.ts');
      exitCode = await doctorCommand(options, io, env);
    });
  const runCli = addMcpOptions(
    program
      .command('run')
      .description('let a model solve a task by writing code (or calling functions) that uses your tools')
      .argument('<instruction>', 'what to do')
      .option('--tools <module>', 'a .js/.ts module whose default export is a list or record of tools'),
  )
    .option('--provider <name>', 'openai, mistral, vllm, ollama or llamacpp (else from the environment)')
    .option('--base-url <url>', 'an OpenAI-compatible server (else OPENAI_BASE_URL or the provider default)')
    .option('--model <name>', 'the model (else the provider default)')
    .option(
      '--api-key <key>',
      'the server key (else OPENAI_API_KEY / MISTRAL_API_KEY). A flag is visible in `ps`: prefer the environment',
    )
    .option('--mode <mode>', 'code (default) or function_calling')
    .option(
      '--language <language>',
      `the language the model writes: ${GUEST_LANGUAGES.join(', ')} (default javascript)`,
    )
    .option(
      '--file <path>',
      'Python: an input file in the working directory of the programs (repeatable)',
      collect,
      [],
    )
    .option('--max-steps <n>', 'model round trips before giving up (default 20)')
    .option(
      '--answer-schema <file>',
      'a JSON Schema the final answer must match: sent to the model as a constraint; the answer is its parsed value',
    )
    .option('--db <path>', 'keep the task in this SQLite file (resumable; SIGINT pauses it)')
    .option('--json', 'print the task view as JSON on the last line of stdout');
  addBudgetOptions(runCli).action(async (instruction: string, options: RunCommandOptions) => {
    const { runCommand } = await import('./run-command.ts');
    const { withCliTelemetry } = await import('./cli-telemetry.ts');
    exitCode = await withCliTelemetry(env, () => runCommand(instruction, options, io, env));
  });
  addMcpOptions(
    program
      .command('tools')
      .description('the tools programs get (a tools module, MCP servers)')
      .command('list')
      .description(
        'list the tools of a tools module and of MCP servers: name, effect, description (or as the prompt declares them)',
      )
      .option('--tools <module>', 'a .js/.ts module whose default export is a list or record of tools'),
  )
    .option(
      '--declarations',
      "print the agent prompt's declarations of the tools (TypeScript, or Python stubs)",
    )
    .option('--language <language>', 'with --declarations: typescript (default) or python')
    .option('--json', 'print one JSON object')
    .action((options: ToolsListOptions) =>
      run(async () => (await import('./tools-command.ts')).toolsList(options, io)),
    );
  addMcpOptions(
    program
      .command('mcp')
      .description(
        'serve codecall as an MCP server on stdio: search_tools and execute (code mode) over your tools, and durable tasks',
      )
      .option('--tools <module>', 'a .js/.ts module whose default export is a list or record of tools'),
  )
    .option(
      '--upstream <server>',
      'gateway: an upstream MCP server reached only from programs (tools.NAME.*): NAME=COMMAND [ARGS...] or NAME=URL; repeatable',
      collect,
      [],
    )
    .option('--db <path>', 'keep the tasks in this SQLite file (default: in memory, for this session)')
    .option('--timeout <seconds>', "programs' wall-clock limit unless a call says otherwise")
    .option('--cpu <seconds>', "programs' CPU time limit unless a call says otherwise")
    .option('--memory <mb>', "programs' memory limit in MiB unless a call says otherwise")
    .action(async (options: McpCommandOptions) => {
      const { mcpCommand } = await import('./mcp-command.ts');
      exitCode = await mcpCommand(options, io, env);
    });
  const serve = program
    .command('serve')
    .description(
      'serve the task API (embedded defaults: an SQLite file under ./data, the quickjs sandbox; --db postgres://... for PostgreSQL)',
    )
    // No commander defaults: a flag given wins over CODECALL_* and the config file, an absent one does not.
    .option('--config <file>', 'a JSON config file (also CODECALL_CONFIG)')
    .option('--port <n>', `TCP port, 0 for any free one (default ${DEFAULT_PORT})`)
    .option('--host <host>', 'interface to listen on (default 127.0.0.1)')
    .option(
      '--db <path|url>',
      `the task database: an SQLite file (default ${DEFAULT_DB}) or a postgres://USER@HOST:PORT/DB URL (several servers may share it; a password in a flag shows in \`ps\`: prefer CODECALL_DB or the config file)`,
    )
    .option('--postgres-pool-size <n>', 'PostgreSQL: connections this server keeps open (default 10)')
    .option(
      '--postgres-statement-timeout-ms <ms>',
      'PostgreSQL: a statement running longer is cancelled (default 30000; 0: none)',
    )
    .option(
      '--postgres-idle-in-transaction-timeout-ms <ms>',
      'PostgreSQL: a transaction this server leaves open this long (a stopped process) is ended, freeing its locks (default 5000; 0: never)',
    )
    .option(
      '--postgres-schema <name>',
      "PostgreSQL: the schema holding codecall's tables, created at first start (default codecall)",
    )
    .option('--tools <module>', 'a .js/.ts module whose default export is a list or record of tools')
    .option(
      '--audit-key-file <path>',
      'the audit key, kept outside the database (SQLite: default <db>.audit-key, created 0600 if missing; PostgreSQL: no default, give every server the same key)',
    )
    .option('--concurrency <n>', 'tasks run at once, over every server on the database (default 4)')
    .option(
      '--tenant-concurrency <n>',
      'tasks of one tenant run at once, a hard cap (default none: a soft share, tenantShare, that a tenant passes while no other waits)',
    )
    .option(
      '--sandbox-workers <n>',
      'quickjs sandbox threads (default: one per --concurrency slot, at least one per CPU, at most 32)',
    )
    .option('--sandbox-nice <n>', "the sandbox threads' nice value on Linux, 0-19 (default 10)")
    .option(
      '--paused-vm-budget-bytes <n>',
      'bytes of paused VMs kept in memory to resume from instead of replaying (default 64 MiB, 0: none)',
    )
    .option(
      '--approver-roles <roles>',
      'key roles that may decide approvals, e.g. approver,admin (default: any)',
    )
    .option('--approval-separation', 'the key that submitted a task may not decide its approvals')
    .option(
      '--agent-rerun-reads',
      "a retried agent step runs its read and idempotent calls again instead of reusing the failed step's results",
    )
    .option('--approval-ttl-seconds <n>', 'approval requests expire after this long (default: never)')
    .option(
      '--webhook-secret <whsec>',
      'signs webhooks (Standard Webhooks); needed for callback_url. A flag is visible in `ps`: prefer CODECALL_WEBHOOK_SECRET or the config file',
    )
    .option('--max-journal-bytes <n>', "bytes of entry data one task's journal may hold (default 64 MiB)")
    .option('--max-journal-entries <n>', "entries one task's journal may hold (default 100000)")
    .option('--allow-private-webhooks', 'allow webhooks to loopback, private and link-local addresses')
    .option(
      '--insecure-no-auth',
      'no API keys: every caller is admin (local use only: loopback, own-origin browser requests only)',
    )
    .option('--allow-remote-no-auth', 'let --insecure-no-auth listen on a non-loopback --host')
    .option(
      '--allowed-host <host>',
      'a Host name requests may carry, name[:port] (repeatable; default in no-auth mode: loopback names)',
      // No default: an absent flag leaves allowedHosts to the config file and CODECALL_ALLOWED_HOSTS.
      (value: string, previous: string[] | undefined) => [...(previous ?? []), value],
    )
    .option(
      '--metrics-token-file <file>',
      'a file holding the bearer token that may read /metrics besides admin keys (also CODECALL_METRICS_TOKEN or the config file; no plain flag, as `ps` shows flags)',
    )
    .option(
      '--provider <name>',
      'model provider of instruction tasks: openai, mistral, vllm, ollama, llamacpp',
    )
    .option('--base-url <url>', 'the model server (OpenAI-compatible; default from the provider)')
    .option('--model <name>', 'the model instruction tasks ask')
    .option(
      '--api-key <key>',
      'the model server key (else CODECALL_API_KEY, OPENAI_API_KEY / MISTRAL_API_KEY). A flag is visible in `ps`: prefer the environment or the config file',
    );
  addConfigFlags(serve).action(async (options: ServeOptions) => {
    const { serveCommand } = await import('./serve-command.ts');
    exitCode = await serveCommand(options, io, env);
  });
  const run: RunCommand = async (body) => {
    exitCode = await body();
  };
  registerTasksCommands(program, { io, run, env });
  const keys = program.command('keys').description('API keys of the service, in its SQLite file');
  keys
    .command('create')
    .description('create a key for a tenant; it is printed once and only its hash is stored')
    .requiredOption('--tenant <name>', 'the tenant (1-64 of A-Z a-z 0-9 _ . -)')
    .requiredOption('--db <path>', 'the SQLite database (created if missing)')
    .option('--admin', "the key sees and steers every tenant's tasks (same as --role admin)")
    .option(
      '--role <role>',
      'admin, member (default) or approver (may decide approvals a policy keeps for it)',
    )
    .option('--name <label>', 'a label for the key')
    .option('--json', 'print { key_id, key, tenant, role }')
    .action((options: KeysCreateOptions) => run(async () => (await keysModule()).keysCreate(options, io)));
  keys
    .command('list')
    .description('list keys (never their secrets)')
    .requiredOption('--db <path>', 'the SQLite database')
    .option('--json', 'print one JSON object')
    .action((options: KeysOptions) => run(async () => (await keysModule()).keysList(options, io)));
  keys
    .command('revoke')
    .description('revoke a key: it stops working at once')
    .argument('<id>', 'the key id (key_...)')
    .requiredOption('--db <path>', 'the SQLite database')
    .option('--json', 'print the revoked key as JSON')
    .action((id: string, options: KeysOptions) =>
      run(async () => (await keysModule()).keysRevoke(id, options, io)),
    );
  program
    .command('migrate')
    .description('copy a SQLite task database into an empty PostgreSQL schema, checked table by table')
    .requiredOption('--from <path>', 'the SQLite task database (only read)')
    .requiredOption('--to <url>', 'the PostgreSQL server: postgres://user:password@host:port/database')
    .option('--schema <name>', 'the schema to fill (created if missing; must be empty)', 'codecall')
    .option('--json', 'print one JSON object')
    .action((options: { from: string; to: string; schema?: string; json?: boolean }) =>
      run(async () => (await import('./migrate-command.ts')).migrateCommand(options, io)),
    );
  program
    .command('grammar')
    .description(
      'print the grammar of a JSON Schema (constrained decoding): GBNF, Lark (llguidance) or a regex',
    )
    .argument('<schema>', "a JSON Schema file ('-' reads stdin)")
    .option('--format <format>', 'gbnf, lark or regex (regex only for a schema without recursion)', 'gbnf')
    .option('--whitespace <policy>', 'compact (no whitespace between tokens) or flexible', 'compact')
    .option('--strict', 'fail (exit 1) when a keyword cannot be enforced, instead of listing it on stderr')
    .action((schema: string, options: { format?: string; whitespace?: string; strict?: boolean }) =>
      run(async () => (await import('./grammar-command.ts')).grammarCommand(schema, options, io)),
    );
  const audit = program.command('audit').description('check the integrity of a task database');
  audit
    .command('verify')
    .description(
      "verify every task's journal and audit log hash chains, and a keyed anchor with --anchor (exit 1 when broken)",
    )
    .requiredOption('--db <path>', 'the SQLite task database, or a postgres:// URL')
    .option('--schema <name>', 'with a postgres:// --db: the schema (default codecall)')
    .option('--anchor <file>', 'an anchor written earlier by `codecall audit anchor` (SQLite)')
    .option('--key <key>', 'the audit key (else CODECALL_AUDIT_KEY)')
    .option(
      '--key-file <path>',
      'a file holding the audit key (else CODECALL_AUDIT_KEY_FILE, else <db>.audit-key; a postgres:// database has no such file: give --key, --key-file or the variables)',
    )
    .option('--json', 'print one JSON object')
    .action((options: AuditVerifyOptions) =>
      run(async () => (await import('./audit-command.ts')).auditVerify(options, io)),
    );
  audit
    .command('anchor')
    .description('write a keyed, signed summary of every task, to check later with `audit verify --anchor`')
    .requiredOption('--db <path>', 'the SQLite task database')
    .option('--out <file>', 'write the anchor here (default: stdout)')
    .option('--key <key>', 'the audit key (else CODECALL_AUDIT_KEY)')
    .option(
      '--key-file <path>',
      'a file holding the audit key (default <db>.audit-key, created 0600 if missing)',
    )
    .action((options: AuditKeyOptions & { out?: string }) =>
      run(async () => (await import('./audit-command.ts')).auditAnchor(options, io)),
    );
  registerToolformerCommands(program, { io, run, env });
  try {
    await program.parseAsync([...argv]);
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode === 0 ? 0 : EXIT_USAGE;
    if (isCodecallError(e)) {
      io.stderr(`error ${e.code}: ${e.message}\n`);
      return EXIT_USAGE;
    }
    throw e;
  }
  return exitCode;
}
