/** Processes and asyncio in the guest: the process policy, a loop that reads the host, the log. Part of GUEST_RUNNER (guest-runner.ts). */
export const GUEST_DETERMINISM = String.raw`# ---- determinism ---------------------------------------------------------------------------------------------
_NO_PROCESSES = 'starting processes is not allowed for this task (tool_constraints.allow_subprocesses)'

_filter_calls = []

def _filter_prep():
    """What installing the no-exec filter needs that does not depend on the filter: _ctypes, prctl and syscall.
    Made while a pooled interpreter waits (0.5-0.9 ms of a warm start), else at the first install."""
    if _filter_calls:
        return _filter_calls[0]
    import _ctypes
    class _Char(_ctypes._SimpleCData):
        _type_ = 'c'
    class _Fn(_ctypes.CFuncPtr):
        _flags_ = _ctypes.FUNCFLAG_CDECL | _ctypes.FUNCFLAG_USE_ERRNO
    libc = _ctypes.dlopen(None, _ctypes.RTLD_LOCAL)
    prctl, syscall = (_Fn(_ctypes.dlsym(libc, name)) for name in ('prctl', 'syscall'))
    _filter_calls.append((_ctypes, _Char, prctl, syscall, {'x86_64': 317, 'aarch64': 277}.get(os.uname().machine)))
    return _filter_calls[0]

def _install_filter(blob):
    """A second seccomp filter, on top of bwrap's: execve and execveat fail with EPERM from here on, so no
    program can start another, whatever it calls (forking stays allowed). Through _ctypes itself: the ctypes
    package costs a cold start a millisecond to import."""
    _ctypes, _Char, prctl, syscall, nr = _filter_prep()
    buf = (_Char * len(blob)).from_buffer_copy(blob)
    # struct sock_fprog {unsigned short len; struct sock_filter *filter;}, on the 64-bit little-endian machines below.
    prog = (len(blob) // 8).to_bytes(2, 'little') + bytes(6) + _ctypes.addressof(buf).to_bytes(8, 'little')
    prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS (bwrap set it already)
    if nr is None or syscall(nr, 1, 0, prog) != 0:
        raise RuntimeError('cannot install the no-exec filter (errno ' + str(_ctypes.get_errno()) + ')')

def _command_of(args, shell):
    if isinstance(args, (str, bytes)):
        text = args.decode() if isinstance(args, bytes) else args
        return text.strip().split()[0] if shell and text.strip() else text
    first = list(args)[0] if args else ''
    return os.fsdecode(first)

_check = [None]

# The exceptions that were the process limit (fork's EAGAIN): by identity, so a program cannot forge the code.
_process_limit_errors = []

def _limited(fn):
    """fork(2) fails with EAGAIN at RLIMIT_NPROC or the cgroup's pids.max: the program sees BlockingIOError as
    ever; uncaught, it is PROCESS_LIMIT."""
    def call(*a, **k):
        try:
            return fn(*a, **k)
        except BlockingIOError as e:
            if e.errno == errno.EAGAIN:
                del _process_limit_errors[:-15]
                _process_limit_errors.append(e)
            raise
    return call

def _guard_subprocess():
    """subprocess.Popen asks the policy first (for a clear error; the kernel refuses execve anyway when processes
    are off). Done when the program imports subprocess, or at once when commands are blocked."""
    subprocess = _real_import('subprocess')
    check = _check[0]
    if check is None or getattr(subprocess.Popen, '_cc_guarded', False):
        return
    execute = subprocess.Popen._execute_child
    def _execute_child(self, args, executable, *rest, **kw):
        shell = rest[-1] if rest and isinstance(rest[-1], bool) else kw.get('shell', False)
        check(os.fsdecode(executable) if executable else _command_of(args, shell))
        return _limited(execute)(self, args, executable, *rest, **kw)
    subprocess.Popen._execute_child = _execute_child
    subprocess.Popen._cc_guarded = True
    _subprocess_guarded[0] = True

# What starts a process in multiprocessing: a Process (Pool's workers, ProcessPoolExecutor's), and the helpers the
# spawn and forkserver contexts start (the resource tracker, for their semaphores, and the fork server).
_MP_STARTS = (('multiprocessing.process', 'BaseProcess', 'start'),
              ('multiprocessing.resource_tracker', 'ResourceTracker', 'ensure_running'),
              ('multiprocessing.forkserver', 'ForkServer', 'ensure_running'))

def _guard_multiprocessing():
    """With processes off, multiprocessing (Pool, Process, ProcessPoolExecutor) refuses to start one, naming the
    option: its workers are forks, which the kernel allows, and a Pool left that way hung at its close until the
    execution's timeout (the spawn context's resource tracker, an exec, failed as a BrokenPipeError). Done once
    each module is loaded (the import hook, whoever imports it)."""
    if not _mp_refused[0]:
        return
    for module, name, method in _MP_STARTS:
        # None while the module is still being loaded (its own imports come through the hook).
        cls = getattr(sys.modules.get(module), name, None)
        if cls is None or getattr(getattr(cls, method), '_cc_guarded', False):
            continue
        def refuse(*a, **k):
            raise PermissionError(_NO_PROCESSES + ': multiprocessing (Pool, Process, ProcessPoolExecutor) starts processes')
        refuse._cc_guarded = True
        setattr(cls, method, refuse)

def _process_policy(policy, exec_filter):
    blocked = set(policy.get('blockedCommands') or [])
    allow = bool(policy.get('allowSubprocesses'))
    def check(command):
        if not allow:
            raise PermissionError(_NO_PROCESSES)
        if command in blocked or os.path.basename(command) in blocked:
            raise PermissionError('starting ' + repr(command) + ' is not allowed for this task (tool_constraints.blocked_commands)')
    _check[0] = check
    _mp_refused[0] = not allow
    _guard_multiprocessing()
    _track_processes()
    if 'subprocess' in sys.modules or (allow and blocked):
        _guard_subprocess()
    def guard(fn, command_of):
        def guarded(*a, **k):
            check(command_of(a))
            return fn(*a, **k)
        return guarded
    for name in ('execv', 'execve', 'execvp', 'execvpe', 'execl', 'execle', 'execlp', 'execlpe',
                 'spawnv', 'spawnve', 'spawnvp', 'spawnvpe', 'spawnl', 'spawnle', 'spawnlp', 'spawnlpe',
                 'posix_spawn', 'posix_spawnp'):
        fn = getattr(os, name, None)
        if fn is not None:
            index = 1 if name.startswith('spawn') else 0
            setattr(os, name, guard(fn, lambda a, i=index: os.fsdecode(a[i]) if len(a) > i else ''))
    for name in ('system', 'popen'):
        setattr(os, name, guard(getattr(os, name), lambda a: _command_of(a[0] if a else '', True)))
    for name in ('fork', 'forkpty'):
        if hasattr(os, name):
            setattr(os, name, _limited(getattr(os, name)))
    if not allow and exec_filter:
        _install_filter(binascii.a2b_base64(exec_filter))

def _timer_ms(seconds):
    """A delay the host's JSON can carry: inf (and anything past it) is the largest float, which never fires."""
    ms = float(seconds) * 1000
    return 0.0 if not ms > 0 else min(ms, sys.float_info.max)

_loop = []
# The host timers that wake the loop for its own timers: call id -> the loop time they are for.
_wakes = {}

def _wake_after(seconds):
    """Asks the host for a timer unless one already wakes the loop by then (deadlines in clock ms)."""
    deadline = _clock[0] + seconds * 1000
    if _wakes and min(_wakes.values()) <= deadline:
        return
    call_id = _issue({'t': 'timer', 'ms': _timer_ms(seconds)})
    _wakes[call_id] = deadline
    _futures[call_id] = asyncio.get_running_loop().create_future()

def _asyncio():
    """Sets asyncio up once, the first time the program needs it (a top-level await, an import of asyncio): a
    loop whose selector reads the host, asyncio.sleep as a host timer, the policy asyncio.run() uses."""
    global asyncio
    if _loop:
        return _loop[0]
    aio, selectors = _real_import('asyncio'), _real_import('selectors')
    asyncio = aio
    class _HostSelector(selectors.BaseSelector):
        """Reads the host's next outcome only when every task waits (the loop would block): the host alone decides
        the order of deliveries, as it does for JavaScript. A wait with a timeout (a loop timer: wait_for,
        call_later) becomes a host timer, so a timer and a tool race on the host and the journal says who won."""
        def __init__(self):
            self._inner = selectors.DefaultSelector()
        def register(self, fileobj, events, data=None):
            return self._inner.register(fileobj, events, data)
        def unregister(self, fileobj):
            return self._inner.unregister(fileobj)
        def modify(self, fileobj, events, data=None):
            return self._inner.modify(fileobj, events, data)
        def get_map(self):
            return self._inner.get_map()
        def close(self):
            self._inner.close()
        def select(self, timeout=None):
            if timeout is not None and timeout <= 0:
                return self._inner.select(0)
            if timeout is not None:
                _wake_after(timeout)
            if _futures:
                _dispatch(_next_outcome())
                return self._inner.select(0)
            return self._inner.select(timeout)

    class _Loop(asyncio.SelectorEventLoop):
        def __init__(self):
            super().__init__(_HostSelector())
            # Timers are due within a microsecond: the loop's own 1 ns is below what its float time can tell.
            self._clock_resolution = 1e-6
        def time(self):
            # The journaled clock: it moves with each delivery, so loop timers fire at the same points on replay.
            # Seconds since the program started: small numbers keep their sub-microsecond precision (at epoch
            # seconds a timer due now could compare later than now forever, and the loop spun).
            return (_clock[0] - _clock_origin[0]) / 1000
    async def asleep(seconds, result=None):
        await _call_async({'t': 'timer', 'ms': _timer_ms(seconds)})
        return result
    aio.sleep = asleep
    class _Policy(aio.DefaultEventLoopPolicy):
        def new_event_loop(self):
            return _Loop()
    # asyncio.run() in the program makes its loops through the policy, so they read the host too.
    aio.set_event_loop_policy(_Policy())
    loop = aio.new_event_loop()
    aio.set_event_loop(loop)
    _loop.append(loop)
    return loop


# ---- output ----------------------------------------------------------------------------------------------------
class _Log:
    def __init__(self, level):
        self.level, self.buf = level, ''
    def write(self, text):
        text = str(text)
        self.buf += text
        # print() writes its arguments, separators and end one by one: an entry ends where a write ends a line,
        # so print('a\nb') is one entry, as console.log('a\nb') is. A long unfinished line goes out in pieces.
        if self.buf.endswith('\n') or len(self.buf) > 65536:
            line, self.buf = self.buf[:-1] if self.buf.endswith('\n') else self.buf, ''
            _send({'t': 'log', 'level': self.level, 'message': line})
        return len(text)
    def flush(self):
        if self.buf:
            _send({'t': 'log', 'level': self.level, 'message': self.buf})
            self.buf = ''
    def isatty(self):
        return False

`;
