import { failure } from '../../errors/index.ts';
import type { SerializedError, WorkspaceFile } from '../../spec/index.ts';
import { isWorkspaceName } from '../../spec/index.ts';
import { MAX_ARTIFACT_BYTES, MAX_ARTIFACTS } from './artifact-caps.ts';
import { MAX_LINE_BYTES } from './python-process.ts';
import type { ExitInfo } from './python-process.ts';

// The terms of one python execution (python-execution.ts): its default limits, the guest's messages, and how an
// interpreter's end reads as a failure.

export type Failure = SerializedError & { line?: number };

/** Processes a sandbox may run at once (its own and its children): enough for subprocess use, not for a bomb. */
export const DEFAULT_MAX_PROCESSES = 32;
/** Largest file the program may write. */
export const DEFAULT_MAX_FILE_BYTES = 256 * 1024 * 1024;
/** Files a sandboxed process may hold open (RLIMIT_NOFILE; the host's is often 20k or more). */
export const DEFAULT_MAX_OPEN_FILES = 1024;
/** What the sandbox's tmpfs mounts may hold in all, and how many entries (inodes are host memory): watchdog.ts. */
export const DEFAULT_MAX_WORKSPACE_BYTES = 1024 * 1024 * 1024;
export const DEFAULT_MAX_WORKSPACE_ENTRIES = 10_000;
/**
 * Memory the host allows the sandbox's processes together beyond the memory limit: the interpreter's own
 * (RLIMIT_AS is set above its baseline, so one process never reaches this) and bwrap's two processes.
 */
export const PROCESS_MEMORY_ALLOWANCE = 64 * 1024 * 1024;
/**
 * What the host holds for one program at once: the arguments of its queued and running tool calls, and the
 * outcomes it has not read. Unbounded, a program wrote one 16 MiB call line again and again (no memory of its
 * own spent) and the host grew by gigabytes: found by the escape suite ("tool calls that pile up on the host").
 */
export const MAX_HELD_BYTES = MAX_LINE_BYTES;

export const LEVELS: ReadonlySet<string> = new Set(['log', 'info', 'warn', 'error', 'debug']);

export interface GuestMessage {
  t?: unknown;
  id?: unknown;
  ns?: unknown;
  name?: unknown;
  args?: unknown;
  ms?: unknown;
  level?: unknown;
  message?: unknown;
  ok?: unknown;
  value?: unknown;
  error?: Partial<Failure>;
  artifacts?: unknown;
}

/** The files a guest reports, checked: relative names, base64 data. */
export function artifactsOf(raw: unknown): WorkspaceFile[] {
  if (!Array.isArray(raw)) return [];
  const files: WorkspaceFile[] = [];
  const names = new Set<string>();
  let total = 0;
  for (const f of raw as { name?: unknown; data?: unknown }[]) {
    // The guest runner keeps to these caps; the host holds them whatever the guest sends (issue 15).
    if (files.length >= MAX_ARTIFACTS) break;
    if (typeof f?.name !== 'string' || typeof f.data !== 'string' || !isWorkspaceName(f.name)) continue;
    if (names.has(f.name)) continue;
    const data = Buffer.from(f.data, 'base64');
    if (total + data.length > MAX_ARTIFACT_BYTES) continue;
    total += data.length;
    names.add(f.name);
    files.push({ name: f.name, data: new Uint8Array(data) });
  }
  return files;
}

/** What a sandbox's cgroup allows beyond the program's memory limit. */
export const CGROUP_ALLOWANCE_BYTES = 272 * 1024 * 1024;

/** The program broke the protocol on purpose (it writes the pipe too): its own failure, never retried. */
export function violation(what: string): Failure {
  return failure('PROTOCOL_VIOLATION', `the program broke the sandbox's protocol: ${what}`);
}

/** A guest-sent id, bounded for a message. */
export function describeId(id: unknown): string {
  const text = typeof id === 'string' ? JSON.stringify(id) : typeof id;
  return text.length > 40 ? `${text.slice(0, 40)}...` : text;
}

export function exitFailure(exit: ExitInfo, broken: string | null): Failure {
  if (broken) return violation(broken);
  if (exit.signal === 'SIGXCPU') {
    return failure('CPU_LIMIT', 'the program used up its CPU time');
  }
  if (exit.signal === 'SIGXFSZ') {
    return failure('FILE_LIMIT', 'the program wrote a file over the size limit');
  }
  const how = exit.signal ? `by ${exit.signal}` : `with code ${String(exit.code)}`;
  return failure('SANDBOX_CRASHED', `the sandboxed interpreter ended ${how} before the program did`);
}
