import { execFile, spawnSync } from 'node:child_process';
import { chownSync, existsSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A throwaway PostgreSQL cluster (initdb in a temp dir, pg_ctl on a free loopback port). */
export interface PostgresCluster {
  /** `postgres://postgres@127.0.0.1:PORT/postgres` (trust authentication, loopback only). */
  readonly url: string;
  readonly dataDir: string;
  stop(): Promise<void>;
}

/** The newest installed server's bin directory (Debian: /usr/lib/postgresql/N/bin), or null. */
export function findPostgresBin(): string | null {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((v) => /^\d+$/.test(v) && existsSync(join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? null : join(root, versions[0], 'bin');
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** initdb refuses root: as root the cluster runs as the `postgres` user (Debian's package creates it). */
function asServerUser(bin: string, args: string[]): [string, string[]] {
  if (process.getuid?.() !== 0) return [bin, args];
  return ['runuser', ['-u', 'postgres', '--', bin, ...args]];
}

function postgresUid(): { uid: number; gid: number } {
  const out = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
  if (out.status !== 0) throw new Error('running as root needs a `postgres` user to run the cluster as');
  return { uid: Number(out.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/**
 * Starts a cluster. `durable: false` (tests) turns fsync off: a test cluster is thrown away, and commits then cost
 * no disk flush; benchmarks keep it on.
 */
export async function startPostgresCluster(
  options: { durable?: boolean; maxConnections?: number } = {},
): Promise<PostgresCluster> {
  const bin = findPostgresBin();
  if (bin === null) throw new Error('PostgreSQL is not installed (apt-get install postgresql)');
  const dataDir = await mkdtemp(join(tmpdir(), 'codecall-pg-'));
  if (process.getuid?.() === 0) {
    const { uid, gid } = postgresUid();
    chownSync(dataDir, uid, gid);
  }
  const port = await freePort();
  const initdb = asServerUser(join(bin, 'initdb'), [
    '-D',
    join(dataDir, 'data'),
    '--auth=trust',
    '--username=postgres',
    '--encoding=UTF8',
    '--locale=C',
    '--no-sync',
  ]);
  await run(initdb[0], initdb[1]);
  const settings = [
    `-p ${port}`,
    `-k ${dataDir}`,
    "-c listen_addresses='127.0.0.1'",
    `-c max_connections=${options.maxConnections ?? 300}`,
    ...(options.durable === true
      ? []
      : ['-c fsync=off', '-c synchronous_commit=off', '-c full_page_writes=off']),
  ].join(' ');
  const start = asServerUser(join(bin, 'pg_ctl'), [
    '-D',
    join(dataDir, 'data'),
    '-l',
    join(dataDir, 'server.log'),
    '-o',
    settings,
    '-w',
    'start',
  ]);
  await run(start[0], start[1]);
  let stopped = false;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    dataDir,
    async stop() {
      if (stopped) return;
      stopped = true;
      const stop = asServerUser(join(bin, 'pg_ctl'), [
        '-D',
        join(dataDir, 'data'),
        '-m',
        'immediate',
        '-w',
        'stop',
      ]);
      await run(stop[0], stop[1]).catch(() => undefined);
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
