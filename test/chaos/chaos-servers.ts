// The real `codecall serve` processes of a chaos run, all on one SQLite file, and the faults done to them.
import { join } from 'node:path';
import { startCodecall, until } from '../cli-fixture.ts';

export interface ChaosServer {
  readonly pid: number;
  readonly base: string;
  readonly exited: Promise<number | null>;
  readonly stderr: () => string;
  kill(signal: NodeJS.Signals): void;
}

export interface ServerOptions {
  readonly dir: string;
  readonly ledgerUrl: string;
  readonly leaseMs: number;
  readonly concurrency: number;
  readonly signal?: AbortSignal;
}

/** Starts a server on a free loopback port and resolves once it serves. */
export async function startServer(options: ServerOptions): Promise<ChaosServer> {
  const s = startCodecall(
    {
      CODECALL_LEASE_MS: String(options.leaseMs),
      CODECALL_PYTHON: 'false',
      CHAOS_LEDGER: options.ledgerUrl,
    },
    'serve',
    '--port',
    '0',
    '--db',
    join(options.dir, 'tasks.db'),
    '--tools',
    join(options.dir, 'tools.js'),
    '--concurrency',
    String(options.concurrency),
    '--insecure-no-auth',
  );
  let exited = false;
  void s.exited.then(() => (exited = true));
  let base = '';
  await until(() => {
    if (exited) throw new Error(`a chaos server exited before serving:\n${s.stderr()}`);
    if (options.signal?.aborted) throw new Error('aborted');
    base = /serving on (http:\/\/[^\s]+)/.exec(s.stderr())?.[1] ?? '';
    return base !== '';
  }, 60_000);
  const pid = s.child.pid ?? -1;
  return { pid, base, exited: s.exited, stderr: s.stderr, kill: (signal) => void s.child.kill(signal) };
}
