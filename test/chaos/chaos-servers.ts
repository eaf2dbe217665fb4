// The real `codecall serve` processes of a chaos run, all on one database, and the faults done to them.
import { join } from 'node:path';
import { startCodecall, until } from '../cli-fixture.ts';
import { auditKeyEnv, dbArgument } from './chaos-db.ts';
import type { ChaosDb } from './chaos-db.ts';

export interface ChaosServer {
  readonly pid: number;
  readonly base: string;
  readonly exited: Promise<number | null>;
  readonly stderr: () => string;
  kill(signal: NodeJS.Signals): void;
}

export interface ServerOptions {
  readonly dir: string;
  readonly db: ChaosDb;
  readonly ledgerUrl: string;
  readonly leaseMs: number;
  readonly concurrency: number;
  /** Checks API keys (else --insecure-no-auth). */
  readonly auth?: boolean;
  /** Signs webhooks (and lets them go to the loopback receiver). */
  readonly webhookSecret?: string;
  readonly signal?: AbortSignal;
}

/** Starts a server on a free loopback port and resolves once it serves. */
export async function startServer(options: ServerOptions): Promise<ChaosServer> {
  const s = serve(options, '0');
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

/**
 * Starts a server on the port a live one listens on: it must fail to listen, and (issue 16 item 4) claim
 * nothing before it does. Resolves with its pid once it has exited.
 */
export async function startOnTakenPort(options: ServerOptions, base: string): Promise<{ pid: number }> {
  // A bigger --concurrency than the others', so that the global bound leaves it room to claim if it would.
  const s = serve({ ...options, concurrency: Math.max(8, options.concurrency) }, new URL(base).port);
  const pid = s.child.pid ?? -1;
  const timer = setTimeout(() => s.child.kill('SIGKILL'), 60_000);
  await s.exited;
  clearTimeout(timer);
  return { pid };
}

function serve(options: ServerOptions, port: string): ReturnType<typeof startCodecall> {
  return startCodecall(
    {
      CODECALL_LEASE_MS: String(options.leaseMs),
      CODECALL_PYTHON: 'false',
      CHAOS_LEDGER: options.ledgerUrl,
      // A server stopped inside a transaction frees the claim lock well within a lease (PostgreSQL only).
      CODECALL_POSTGRES_IDLE_IN_TRANSACTION_TIMEOUT_MS: String(
        Math.max(200, Math.floor(options.leaseMs / 2)),
      ),
      ...auditKeyEnv(options.db),
      ...(options.webhookSecret
        ? { CODECALL_WEBHOOK_SECRET: options.webhookSecret, CODECALL_ALLOW_PRIVATE_WEBHOOKS: 'true' }
        : {}),
    },
    'serve',
    '--port',
    port,
    '--db',
    dbArgument(options.db),
    '--tools',
    join(options.dir, 'tools.js'),
    '--concurrency',
    String(options.concurrency),
    ...(options.auth === true ? [] : ['--insecure-no-auth']),
  );
}
