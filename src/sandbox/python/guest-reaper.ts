/** pid 1's reaping of the program's orphans. Part of GUEST_RUNNER (guest-runner.ts), before the process policy. */
export const GUEST_REAPER = String.raw`# ---- orphans ---------------------------------------------------------------------------------------------------
# This interpreter is the sandbox's pid 1 (bwrap --as-pid-1), so the kernel hands it every orphan of the program (a
# shell's 'cmd &', a double fork, a daemon). Never waited for, their zombies would count towards the process limit:
# before each fork of the program pid 1 reaps the zombie children it did not start itself. Those it started (their
# pids recorded at the fork) are the program's to wait for, so their exit status stays the program's.
import _thread
_started = set()
# Held from a fork to the record of its pid: a reap in another thread cannot take a child not yet recorded.
_fork_lock = _thread.RLock()
# Process starts in flight whose pid pid 1 cannot learn (os.system): no reaping meanwhile.
_untracked = [0]
_real_waitpid = os.waitpid

def _zombie_children():
    """pid 1's children (by /proc, which the pid namespace makes ours alone): all of them, and the zombies."""
    children, zombies = set(), []
    for entry in os.listdir('/proc'):
        if not entry.isdigit() or entry == '1':
            continue
        try:
            with open('/proc/' + entry + '/stat', 'rb') as f:
                fields = f.read().rpartition(b')')[2].split()
        except OSError:
            continue
        if len(fields) > 1 and fields[1] == b'1':
            children.add(int(entry))
            if fields[0] == b'Z':
                zombies.append(int(entry))
    return children, zombies

def _reap_orphans():
    """Reaps the zombies among pid 1's children that it did not fork itself; returns how many."""
    if os.getpid() != 1 or _untracked[0]:
        return 0
    children, zombies = _zombie_children()
    # A recorded pid that is no child any more was waited for by the program.
    _started.intersection_update(children)
    reaped = 0
    for pid in zombies:
        if pid not in _started:
            try:
                reaped += _real_waitpid(pid, os.WNOHANG)[0] == pid
            except OSError:
                pass
    return reaped

def _tracked(fn, pid_of):
    """A process start of pid 1's own (fork, posix_spawn, subprocess's fork_exec): orphans are reaped first (and
    again, then one retry, when the limit refuses it), and the new pid is recorded as the program's."""
    def call(*a, **k):
        with _fork_lock:
            _reap_orphans()
            try:
                result = fn(*a, **k)
            except BlockingIOError as e:
                if e.errno != errno.EAGAIN or not _reap_orphans():
                    raise
                result = fn(*a, **k)
            pid = pid_of(result)
            if pid and os.getpid() == 1:
                _started.add(pid)
            return result
    return call

def _untracked_start(fn):
    def call(*a, **k):
        with _fork_lock:
            _reap_orphans()
            _untracked[0] += 1
        try:
            return fn(*a, **k)
        finally:
            with _fork_lock:
                _untracked[0] -= 1
    return call

def _track_processes():
    """Wraps every way pid 1 starts a process: os's, and _posixsubprocess's fork_exec (subprocess, multiprocessing;
    subprocess keeps its own reference when it is imported already)."""
    for name in ('fork', 'forkpty', 'posix_spawn', 'posix_spawnp'):
        fn = getattr(os, name, None)
        if fn is not None:
            setattr(os, name, _tracked(fn, lambda r: r[0] if isinstance(r, tuple) else r))
    posixsubprocess = _real_import('_posixsubprocess')
    fork_exec = _tracked(posixsubprocess.fork_exec, lambda pid: pid)
    posixsubprocess.fork_exec = fork_exec
    if 'subprocess' in sys.modules:
        sys.modules['subprocess']._fork_exec = fork_exec
    os.system = _untracked_start(os.system)

`;
