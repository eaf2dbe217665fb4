/**
 * A Python program that tries every way it has to leave processes behind its execution, each named `tag`
 * (prctl PR_SET_NAME) for the host to look for: a forked child, a daemon (new session, double fork), a child
 * that clears its parent-death signal, the interpreter clearing its own, and, where pid 1 of the sandbox is
 * not the program's own process (bwrap's init was), code written into pid 1's memory through /proc/1/mem that
 * clears pid 1's parent-death signal and parks it (x86_64). It tries execve too (processes are off), in the
 * interpreter and in a child. Then it calls `tools.ready()` and ends as `end` says: success, error, or waiting
 * (timeout, abort, crash: the host ends it).
 */
export function leftoverProgram(tag: string, end: string): string {
  return String.raw`import ctypes, os, select, sys
libc = ctypes.CDLL(None, use_errno=True)
TAG = ${JSON.stringify(tag)}.encode()
tried = {}

def hold():
    select.select([], [], [], 3600)

def child(setup):
    pid = os.fork()
    if pid == 0:
        try:
            libc.prctl(15, TAG, 0, 0, 0)
            setup()
            hold()
        finally:
            os._exit(0)
    return pid

def daemon():
    if os.fork():
        os._exit(0)
    os.setsid()

def no_death_signal():
    libc.prctl(1, 0, 0, 0, 0)

def execve():
    # Past the runner's Python guards, straight to the kernel: processes are off for this program.
    argv = (ctypes.c_char_p * 4)(b'/bin/sh', b'-c', b'exit 0', None)
    ctypes.set_errno(0)
    return [libc.execve(b'/bin/sh', argv, None), ctypes.get_errno()]

child(lambda: None)
child(daemon)
child(no_death_signal)
ctypes.set_errno(0)
tried['own death signal'] = [libc.prctl(1, 0, 0, 0, 0), ctypes.get_errno()]
tried['exec'] = execve()
r, w = os.pipe()
if os.fork() == 0:
    os.write(w, repr(execve()).encode())
    os._exit(0)
os.close(w)
tried['exec in child'] = os.read(r, 100).decode()

# pid 1: mov eax, 157 (prctl); mov edi, 1 (PR_SET_PDEATHSIG); xor esi, esi; syscall; then pause() forever.
PARK = bytes.fromhex('b89d000000bf0100000031f60f05b8220000000f05ebf7')
def pid1():
    if os.getpid() == 1:
        return 'own'
    if os.uname().machine != 'x86_64':
        return 'not x86_64'
    pc = int(open('/proc/1/syscall').read().split()[-1], 16)
    with open('/proc/1/mem', 'r+b', buffering=0) as mem:
        mem.seek(pc)
        mem.write(PARK)
    # pid 1 waits for its children: an orphan that exits wakes it into the code written.
    if os.fork() == 0:
        if os.fork() == 0:
            os._exit(0)
        os._exit(0)
    os.wait()
    return 'written'
try:
    tried['pid 1'] = pid1()
except OSError as e:
    tried['pid 1'] = 'refused: %d' % e.errno
print(tried)
tools.ready()
end = ${JSON.stringify(end)}
if end == 'error':
    raise RuntimeError('the program failed')
if end != 'success':
    hold()
tried`;
}
