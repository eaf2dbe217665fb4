import { existsSync, lstatSync } from 'node:fs';
import { GUEST_RUNNER } from './guest-runner.ts';
import { INTERPRETER_FLAGS } from './guest-site.ts';
import { maskedProcFiles } from './proc-masks.ts';
import { RUNNER_BOOTSTRAP } from './runner-code.ts';

export interface BwrapOptions {
  /** The interpreter, which must live under /usr (bound read-only). */
  readonly python: string;
  /** Size of the private tmpfs at /workspace (the program's working directory): input files, artifacts. */
  readonly workspaceBytes: number;
  /** The fd number bwrap reads a seccomp BPF program from, when there is one. */
  readonly seccompFd?: number;
  /** `-P` (keep the working directory off sys.path) exists from Python 3.11; the runner cleans sys.path too. */
  readonly safePathFlag?: boolean;
  /** The runner comes compiled on RUNNER_FD (runner-code.ts) rather than as source. */
  readonly compiledRunner?: boolean;
  /** An empty host file, readable by the sandbox's uid, bound over MASKED_PROC (proc-masks.ts). */
  readonly emptyFile?: string;
  /**
   * The first of SEEDED_FILES.length fds open on /dev/null: each becomes an empty file bound over a kernel source
   * of randomness, which the runner fills from the execution's seed before the program starts.
   */
  readonly seededFilesFd?: number;
  /** matplotlib's font list on the host (font-cache.ts), bound read-only as /tmp/<name>. */
  readonly fontList?: { readonly path: string; readonly name: string };
  /**
   * The interpreter is a fork server (guest-fork-server.ts): it keeps CAP_SYS_ADMIN and CAP_NET_ADMIN in the
   * sandbox's user namespace to give each execution namespaces of its own, and installs the seccomp filter in
   * each execution's process itself (seccompFd is not given).
   */
  readonly forkServer?: boolean;
}

/**
 * Kernel sources of randomness and identity a program can read as files: in the sandbox each is a file of the
 * sandbox's own, filled from the seed (guest-clock.ts), so a replay reads the same bytes. The kernel's getrandom
 * stays (os.getrandom and os.urandom are seeded in Python; C code calling it directly is not).
 */
export const SEEDED_FILES = [
  '/dev/urandom',
  '/dev/random',
  '/proc/sys/kernel/random/uuid',
  '/proc/sys/kernel/random/boot_id',
] as const;

/** Top-level directories that are symlinks into /usr on merged-/usr systems, else bound read-only. */
const ROOT_DIRS = ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];
/**
 * What the interpreter and its libraries need of /etc, and nothing else of it (no passwd, no shadow). Debian's
 * matplotlib reads its defaults from /etc/matplotlibrc (without it, importing pyplot fails: "your Matplotlib
 * install is broken").
 */
const ETC_FILES = [
  '/etc/alternatives',
  '/etc/ld.so.cache',
  '/etc/localtime',
  '/etc/mime.types',
  '/etc/matplotlibrc',
];

/**
 * Size of the sandbox's private /tmp. A tmpfs is memory that no rlimit counts (RLIMIT_AS does not see its pages),
 * and an unsized one may take half the host's RAM: found by the escape suite (escape-python.ts, "filling /tmp").
 */
export const TMP_BYTES = 64 * 1024 * 1024;
/** Size of /dev/shm (POSIX shared memory, multiprocessing's semaphores), for the same reason. */
export const SHM_BYTES = 16 * 1024 * 1024;

/**
 * The bwrap command line of one sandboxed interpreter: every namespace new (no network interface at all), the
 * system's /usr read-only and nothing else of the host but a few files of /etc, a private /tmp and workspace,
 * no capabilities, a new session (no terminal injection), killed with its parent, an empty environment.
 */
export function bwrapArgs(options: BwrapOptions): string[] {
  const args = ['--unshare-all', '--die-with-parent', '--new-session', '--cap-drop', 'ALL'];
  if (options.forkServer) args.push('--cap-add', 'CAP_SYS_ADMIN', '--cap-add', 'CAP_NET_ADMIN');
  // The interpreter is the sandbox's pid 1, so no process in it is another's (bwrap's init was: the program
  // wrote into its memory through /proc/1/mem and ran code outside both seccomp filters, cleared its
  // parent-death signal and outlived the execution). bwrap's death takes pid 1 with it (--die-with-parent, a
  // signal the seccomp filter keeps the program from clearing), and pid 1's death every process of the pid
  // namespace. Found by the escape suite ("pid 1 of the sandbox").
  args.push('--as-pid-1');
  // --unshare-all only tries a user namespace; --disable-userns needs one. Without it the program could make a
  // nested user namespace (`unshare -Urm`, ctypes unshare(CLONE_NEWUSER)), be root there and mount tmpfs of any
  // size, or reach kernel code only namespace root reaches: found by the escape suite ("nested namespaces").
  args.push('--unshare-user', '--disable-userns');
  args.push('--ro-bind', '/usr', '/usr');
  for (const dir of ROOT_DIRS) {
    if (!existsSync(dir)) continue;
    const stat = lstatSync(dir);
    if (stat.isSymbolicLink()) args.push('--symlink', `usr${dir}`, dir);
    else args.push('--ro-bind', dir, dir);
  }
  for (const file of ETC_FILES) args.push('--ro-bind-try', file, file);
  args.push('--proc', '/proc', '--dev', '/dev', '--hostname', 'sandbox');
  // The host's activity (its load, forks, memory, disks, locks) reads as empty files.
  // Not a fork server's: a mount over a file of /proc keeps the kernel from mounting a /proc for each execution's
  // pid namespace (mount_too_revealing); each execution's process binds its own masks (guest-fork-server.ts).
  if (options.emptyFile && !options.forkServer)
    for (const file of maskedProcFiles()) args.push('--ro-bind', options.emptyFile, file);
  args.push(
    '--size',
    String(SHM_BYTES),
    '--tmpfs',
    '/dev/shm',
    '--size',
    String(TMP_BYTES),
    '--tmpfs',
    '/tmp',
  );
  // Read-only: matplotlib reads it and never rebuilds it (a failed write of a rebuild is only logged).
  if (options.fontList) args.push('--ro-bind', options.fontList.path, `/tmp/${options.fontList.name}`);
  // The workspace is the sandbox's own tmpfs, capped: filling it fails with ENOSPC inside, the host's disk is not
  // touched. Input files go in and artifacts come out through the bridge.
  args.push('--size', String(options.workspaceBytes), '--tmpfs', '/workspace', '--chdir', '/workspace');
  // bwrap builds / and /dev on tmpfs mounts of no size, writable by the sandbox's uid (/, /etc, /dev/x were
  // writable without bound: found by the escape suite, "writing outside the workspace"). Read-only once built;
  // the mounts on them (/tmp, /dev/shm, the device nodes, /workspace) keep their own flags.
  args.push('--remount-ro', '/dev', '--remount-ro', '/');
  // Bound after the remounts: these files stay writable for the runner (and the program, which only changes what
  // it reads itself; RLIMIT_FSIZE and the cgroup bound them).
  // Not a fork server's: each execution's process binds seeded files of its own (bwrap's, unlinked once bound,
  // could not be mounted over).
  const seeded = options.forkServer ? undefined : options.seededFilesFd;
  if (seeded !== undefined) {
    SEEDED_FILES.forEach((file, i) => args.push('--perms', '0600', '--bind-data', String(seeded + i), file));
  }
  args.push('--clearenv');
  for (const [name, value] of Object.entries(SANDBOX_ENV)) args.push('--setenv', name, value);
  if (options.seccompFd !== undefined) args.push('--seccomp', String(options.seccompFd));
  // INTERPRETER_FLAGS (-S: the runner does what it needs of site, guest-site.ts); -P: the working directory is not
  // on sys.path (3.11+).
  args.push(
    options.python,
    ...INTERPRETER_FLAGS,
    ...(options.safePathFlag === false ? [] : ['-P']),
    '-c',
    options.compiledRunner ? RUNNER_BOOTSTRAP : GUEST_RUNNER,
  );
  return args;
}

/**
 * The whole environment of the sandbox: a fixed hash seed (set iteration order replays), local time in UTC (a
 * replay on a host in another zone reads the same local time), one BLAS thread, matplotlib drawing to files.
 */
export const SANDBOX_ENV: Readonly<Record<string, string>> = {
  PYTHONHASHSEED: '0',
  TZ: 'UTC',
  PYTHONIOENCODING: 'utf-8',
  HOME: '/tmp',
  TMPDIR: '/tmp',
  LANG: 'C.UTF-8',
  PATH: '/usr/bin:/bin',
  OPENBLAS_NUM_THREADS: '1',
  OMP_NUM_THREADS: '1',
  MKL_NUM_THREADS: '1',
  // matplotlib: no display (the Agg backend renders PNGs to files), its cache in the sandbox's own /tmp, where
  // the font list the driver built once is bound (font-cache.ts).
  MPLBACKEND: 'Agg',
  MPLCONFIGDIR: '/tmp',
};
