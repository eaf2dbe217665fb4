import { endianness } from 'node:os';
import { CodecallError } from '../../errors/index.ts';

/** Architectures the filter knows syscall numbers for (Node's `process.arch` names). */
export type SeccompArch = 'x64' | 'arm64';

export interface SeccompFilterOptions {
  /** Defaults to the host's architecture; SANDBOX_UNAVAILABLE on any other host. */
  arch?: SeccompArch;
  /** Syscall names answered with EPERM (ENOSYS for clone3); defaults to BLOCKED_SYSCALLS. */
  blocked?: readonly string[];
}

// linux/bpf_common.h: classic BPF opcodes, composed as class | size | mode (or class | op | source).
const BPF_LD_W_ABS = 0x00 | 0x00 | 0x20;
const BPF_JMP_JEQ_K = 0x05 | 0x10 | 0x00;
const BPF_JMP_JSET_K = 0x05 | 0x40 | 0x00;
const BPF_RET_K = 0x06 | 0x00;

// linux/seccomp.h
export const SECCOMP_RET_KILL_PROCESS = 0x80000000;
export const SECCOMP_RET_ERRNO = 0x00050000;
export const SECCOMP_RET_ALLOW = 0x7fff0000;

// struct seccomp_data { int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6]; }. Both supported
// arches are little-endian, so the low 32 bits of args[0] sit at offset 16.
const DATA_NR = 0;
const DATA_ARCH = 4;
const DATA_ARG0_LOW = 16;

const EPERM = 1;
const ENOSYS = 38;
/** x32 syscalls are x86_64 numbers with this bit set; they pass the arch check, so refuse them apart. */
const X32_SYSCALL_BIT = 0x40000000;
const CLONE_NEWUSER = 0x10000000;

// linux/audit.h: EM_X86_64 / EM_AARCH64 | __AUDIT_ARCH_64BIT | __AUDIT_ARCH_LE.
const AUDIT_ARCH: Readonly<Record<SeccompArch, number>> = { x64: 0xc000003e, arm64: 0xc00000b7 };

/**
 * Syscall numbers from arch/x86/entry/syscalls/syscall_64.tbl and include/uapi/asm-generic/unistd.h
 * (which arm64 uses). A missing arch means the syscall does not exist there.
 */
export const SYSCALL_NUMBERS: Readonly<Record<string, Readonly<Partial<Record<SeccompArch, number>>>>> = {
  ptrace: { x64: 101, arm64: 117 },
  process_vm_readv: { x64: 310, arm64: 270 },
  process_vm_writev: { x64: 311, arm64: 271 },
  mount: { x64: 165, arm64: 40 },
  umount2: { x64: 166, arm64: 39 },
  pivot_root: { x64: 155, arm64: 41 },
  chroot: { x64: 161, arm64: 51 },
  swapon: { x64: 167, arm64: 224 },
  swapoff: { x64: 168, arm64: 225 },
  reboot: { x64: 169, arm64: 142 },
  kexec_load: { x64: 246, arm64: 104 },
  kexec_file_load: { x64: 320, arm64: 294 },
  init_module: { x64: 175, arm64: 105 },
  finit_module: { x64: 313, arm64: 273 },
  delete_module: { x64: 176, arm64: 106 },
  keyctl: { x64: 250, arm64: 219 },
  add_key: { x64: 248, arm64: 217 },
  request_key: { x64: 249, arm64: 218 },
  bpf: { x64: 321, arm64: 280 },
  perf_event_open: { x64: 298, arm64: 241 },
  userfaultfd: { x64: 323, arm64: 282 },
  unshare: { x64: 272, arm64: 97 },
  setns: { x64: 308, arm64: 268 },
  clone: { x64: 56, arm64: 220 },
  clone3: { x64: 435, arm64: 435 },
  open_by_handle_at: { x64: 304, arm64: 265 },
  name_to_handle_at: { x64: 303, arm64: 264 },
  lookup_dcookie: { x64: 212, arm64: 18 },
  quotactl: { x64: 179, arm64: 60 },
  acct: { x64: 163, arm64: 89 },
  settimeofday: { x64: 164, arm64: 170 },
  clock_settime: { x64: 227, arm64: 112 },
  clock_adjtime: { x64: 305, arm64: 266 },
  adjtimex: { x64: 159, arm64: 171 },
  syslog: { x64: 103, arm64: 116 },
  personality: { x64: 135, arm64: 92 },
  io_uring_setup: { x64: 425, arm64: 425 },
  io_uring_enter: { x64: 426, arm64: 426 },
  io_uring_register: { x64: 427, arm64: 427 },
  fanotify_init: { x64: 300, arm64: 262 },
  fanotify_mark: { x64: 301, arm64: 263 },
  // inotify on the shared, read-only /usr sees other sandboxes' imports and the host's program starts.
  inotify_init: { x64: 253 },
  inotify_init1: { x64: 294, arm64: 26 },
  mbind: { x64: 237, arm64: 235 },
  move_pages: { x64: 279, arm64: 239 },
  migrate_pages: { x64: 256, arm64: 238 },
  set_mempolicy: { x64: 238, arm64: 237 },
  vhangup: { x64: 153, arm64: 58 },
  iopl: { x64: 172 },
  ioperm: { x64: 173 },
  modify_ldt: { x64: 154 },
  // Not in the default list: blocked by the second filter of a task that may not start processes.
  execve: { x64: 59, arm64: 221 },
  execveat: { x64: 322, arm64: 281 },
  // Not in the default list: allowed or refused by their first argument (ARGUMENT_RULES).
  prctl: { x64: 157, arm64: 167 },
  socket: { x64: 41, arm64: 198 },
  socketpair: { x64: 53, arm64: 199 },
};

/**
 * Syscalls only the no-exec filter blocks (the interpreter itself must still be exec'd by bwrap), and those
 * every filter checks by their first argument instead of refusing them whole.
 */
const NOT_BLOCKED_WHOLE = new Set(['clone', 'execve', 'execveat', 'prctl', 'socket', 'socketpair']);

/** Syscalls a sandboxed program never needs and that widen the kernel surface or escape the namespaces. */
export const BLOCKED_SYSCALLS: readonly string[] = Object.freeze(
  Object.keys(SYSCALL_NUMBERS).filter((name) => !NOT_BLOCKED_WHOLE.has(name)),
);

/** glibc (2.34+) tries clone3 first and falls back to clone only on ENOSYS, so EPERM would break threads. */
const ERRNO_FOR: Readonly<Record<string, number>> = { clone3: ENOSYS };

/** What a family the kernel lacks answers: libraries take it as "not here" and go on. */
const EAFNOSUPPORT = 97;
const PR_SET_PDEATHSIG = 1;
/**
 * Socket families a program may open: unix sockets (socketpair, asyncio's self-pipe, multiprocessing) and IP in
 * the sandbox's own network namespace (loopback only). Everything else (netlink, packet, vsock, bluetooth, alg,
 * key, xdp, ...) is kernel surface or a view of the host: an allowlist, so a family added later stays refused.
 */
export const SOCKET_FAMILIES: Readonly<Record<string, number>> = { AF_UNIX: 1, AF_INET: 2, AF_INET6: 10 };

/**
 * Syscalls decided by the low word of args[0] (both arches pass it there): clone with CLONE_NEWUSER is the one
 * namespace an unprivileged process can still make; prctl(PR_SET_PDEATHSIG) would let a process (the
 * interpreter is the sandbox's pid 1) outlive bwrap, whose death is what ends the sandbox; socket families as
 * above.
 */
type ArgumentRule =
  | { readonly kind: 'flag'; readonly refused: number }
  | { readonly kind: 'refuse'; readonly values: readonly number[] }
  | { readonly kind: 'allow'; readonly values: readonly number[] };
const ARGUMENT_RULES: Readonly<Record<string, ArgumentRule>> = {
  clone: { kind: 'flag', refused: CLONE_NEWUSER },
  prctl: { kind: 'refuse', values: [PR_SET_PDEATHSIG] },
  socket: { kind: 'allow', values: Object.values(SOCKET_FAMILIES) },
  socketpair: { kind: 'allow', values: Object.values(SOCKET_FAMILIES) },
};

/** One struct sock_filter; jt/jf name a label (resolved to a relative offset) or are 0 for "next". */
interface Insn {
  code: number;
  jt: string | 0;
  jf: string | 0;
  k: number;
}
type Line = Insn | { label: string };

const stmt = (code: number, k: number): Insn => ({ code, jt: 0, jf: 0, k });
const jump = (code: number, k: number, jt: string | 0, jf: string | 0): Insn => ({ code, jt, jf, k });

/** Resolves labels to forward offsets (cBPF only jumps forward, at most 255) and encodes 8 bytes each. */
function assemble(lines: readonly Line[]): Buffer {
  const insns: Insn[] = [];
  const labels = new Map<string, number>();
  for (const line of lines) {
    if ('label' in line) labels.set(line.label, insns.length);
    else insns.push(line);
  }
  const offset = (target: string | 0, at: number): number => {
    if (target === 0) return 0;
    const to = labels.get(target);
    const delta = to === undefined ? -1 : to - at - 1;
    if (delta < 0 || delta > 255) throw new Error(`seccomp: bad jump to ${target} from ${at}`);
    return delta;
  };
  const le = endianness() === 'LE';
  const out = Buffer.alloc(insns.length * 8);
  insns.forEach((insn, i) => {
    const at = i * 8;
    if (le) out.writeUInt16LE(insn.code, at);
    else out.writeUInt16BE(insn.code, at);
    out.writeUInt8(offset(insn.jt, i), at + 2);
    out.writeUInt8(offset(insn.jf, i), at + 3);
    if (le) out.writeUInt32LE(insn.k >>> 0, at + 4);
    else out.writeUInt32BE(insn.k >>> 0, at + 4);
  });
  return out;
}

function hostArch(): SeccompArch {
  if (process.arch === 'x64' || process.arch === 'arm64') return process.arch;
  throw new CodecallError('SANDBOX_UNAVAILABLE', `no seccomp filter for architecture ${process.arch}`, {
    details: { arch: process.arch },
  });
}

/** A classic-BPF seccomp program (struct sock_filter[] as bytes, 8 bytes per instruction, host endianness) for bwrap's `--seccomp FD`. */
export function seccompFilter(options: SeccompFilterOptions = {}): Buffer {
  const arch = options.arch ?? hostArch();
  const blocked = options.blocked ?? BLOCKED_SYSCALLS;
  const unknown = blocked.filter((name) => !Object.hasOwn(SYSCALL_NUMBERS, name));
  if (unknown.length > 0) {
    throw new CodecallError('INVALID_ARGUMENT', `unknown syscalls for seccomp: ${unknown.join(', ')}`, {
      details: { unknown },
    });
  }

  const lines: Line[] = [
    // A filter for another ABI would read the wrong numbers, so anything else dies.
    stmt(BPF_LD_W_ABS, DATA_ARCH),
    jump(BPF_JMP_JEQ_K, AUDIT_ARCH[arch], 0, 'kill'),
    stmt(BPF_LD_W_ABS, DATA_NR),
  ];
  if (arch === 'x64') lines.push(jump(BPF_JMP_JSET_K, X32_SYSCALL_BIT, 'enosys', 0));
  const seen = new Set<number>();
  for (const name of blocked) {
    const nr = SYSCALL_NUMBERS[name]?.[arch];
    if (nr === undefined || seen.has(nr)) continue;
    seen.add(nr);
    lines.push(jump(BPF_JMP_JEQ_K, nr, ERRNO_FOR[name] === ENOSYS ? 'enosys' : 'eperm', 0));
  }
  // Then the syscalls decided by their first argument; each jumps to its rule, after the allow.
  const rules: [string, ArgumentRule][] = [];
  for (const [name, rule] of Object.entries(ARGUMENT_RULES)) {
    const nr = SYSCALL_NUMBERS[name]?.[arch];
    if (nr === undefined || seen.has(nr)) continue;
    seen.add(nr);
    rules.push([name, rule]);
    lines.push(jump(BPF_JMP_JEQ_K, nr, `arg-${name}`, 0));
  }
  lines.push(stmt(BPF_RET_K, SECCOMP_RET_ALLOW));
  // cBPF jumps only forward: each rule ends in returns of its own.
  for (const [name, rule] of rules) {
    lines.push({ label: `arg-${name}` }, stmt(BPF_LD_W_ABS, DATA_ARG0_LOW));
    if (rule.kind === 'flag') {
      lines.push(jump(BPF_JMP_JSET_K, rule.refused, 'eperm', 0), stmt(BPF_RET_K, SECCOMP_RET_ALLOW));
    } else if (rule.kind === 'refuse') {
      for (const value of rule.values) lines.push(jump(BPF_JMP_JEQ_K, value, 'eperm', 0));
      lines.push(stmt(BPF_RET_K, SECCOMP_RET_ALLOW));
    } else {
      for (const value of rule.values) lines.push(jump(BPF_JMP_JEQ_K, value, `ok-${name}`, 0));
      lines.push(
        stmt(BPF_RET_K, SECCOMP_RET_ERRNO | EAFNOSUPPORT),
        { label: `ok-${name}` },
        stmt(BPF_RET_K, SECCOMP_RET_ALLOW),
      );
    }
  }
  lines.push(
    { label: 'eperm' },
    stmt(BPF_RET_K, SECCOMP_RET_ERRNO | EPERM),
    { label: 'enosys' },
    stmt(BPF_RET_K, SECCOMP_RET_ERRNO | ENOSYS),
    { label: 'kill' },
    stmt(BPF_RET_K, SECCOMP_RET_KILL_PROCESS),
  );
  return assemble(lines);
}
