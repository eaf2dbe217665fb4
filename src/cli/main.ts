import { Command, CommanderError } from 'commander';
import { isCodecallError } from '../errors/index.ts';
import type { CliIo, ExecCommandOptions } from './exec-command.ts';
import { execCommand } from './exec-command.ts';

export const EXIT_USAGE = 2;

/** Parses argv and runs the command; resolves the process exit code. */
export async function main(argv: readonly string[], io: CliIo = defaultIo): Promise<number> {
  let exitCode = 0;
  const program = new Command('codecall')
    .description('Durable, code-based tool calling: run programs that call tools inside a sandbox.')
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr });
  program
    .command('exec')
    .description('run a .js/.ts program in the quickjs sandbox')
    .argument('<file>', 'the program')
    .option('--tools <module>', 'a .js/.ts module whose default export is a list or record of tools')
    .option('--timeout <seconds>', 'wall-clock limit')
    .option('--memory <mb>', 'memory limit in MiB')
    .option('--seed <n>', 'seed for Math.random')
    .option('--json', 'print one JSON object on the last line of stdout')
    .action(async (file: string, options: ExecCommandOptions) => {
      exitCode = await execCommand(file, options, io);
    });
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

const defaultIo: CliIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
};
