/**
 * The Python side of the sandbox bridge, run by the sandboxed interpreter (`python3 -c`). It waits on fd 4 for the
 * start message (so a warm pool can start interpreters ahead of use), sets the limits, makes the program
 * deterministic (seeded random, the journaled clock, host-mediated sleeps), defines the tools, runs the program
 * notebook style and reports on fd 3. It trusts nothing the program does after it starts: the host validates every
 * message, and the OS sandbox is the boundary.
 *
 * Protocol (one JSON object per line). Host -> guest: `start {code, tools, seed, clock, limits}`, `outcome {id, ok,
 * payload, clock}`. Guest -> host: `call {id, ns, name, args}`, `timer {id, ms}`, `log {level, message}`, `done {ok,
 * value | error}`. Values are the tagged JSON of src/codec/value-codec.ts (this file has its own copy).
 */
export const GUEST_RUNNER = String.raw`
import sys
# Nothing is imported from the working directory (python3 -P does this too, from 3.11 on).
sys.path[:] = [p for p in sys.path if p not in ('', '.', '/workspace')]
# asyncio, subprocess and ctypes are imported when first needed (or while the interpreter waits in the pool).
import os, errno, json, math, ast, random, time, datetime, resource, builtins, binascii, select
asyncio = None

_out = os.fdopen(3, 'wb')
_in = os.fdopen(4, 'r', encoding='utf-8')
_dumps, _loads = json.dumps, json.loads

def _send(msg):
    line = _dumps(msg, separators=(',', ':'), ensure_ascii=False) + '\n'
    try:
        data = line.encode('utf-8')
    except UnicodeEncodeError:
        # A lone surrogate (a valid str, as it is a valid JS string) has no UTF-8 form: JSON escapes carry it.
        data = (_dumps(msg, separators=(',', ':')) + '\n').encode('ascii')
    _out.write(data)
    _out.flush()

def _recv():
    line = _in.readline()
    if not line:
        os._exit(70)
    return _loads(line)

# The sandbox is set up (bwrap is done with it): the host may hand out this interpreter, and kill it safely.
_send({'t': 'ready'})

# ---- values ------------------------------------------------------------------------------------------------
TAG = '$cc'
_UTC = datetime.timezone.utc
_orig_datetime, _orig_date = datetime.datetime, datetime.date

class _Map(dict):
    """A Map the host sent: a dict to the program, and a Map again when it goes back."""

def _enc(v, path='value', depth=0, ancestors=None):
    # Failures name the path the way the host's codec does (result.a[1].f, args.m.get(0)).
    def fail(what):
        raise TypeError(path + ': ' + what + ' cannot cross the sandbox boundary')
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, int):
        return v if -(2 ** 53) < v < 2 ** 53 else {TAG: 'b', 'v': str(v)}
    if isinstance(v, float):
        if math.isnan(v):
            return {TAG: 'n', 'v': 'NaN'}
        if math.isinf(v):
            return {TAG: 'n', 'v': 'Infinity' if v > 0 else '-Infinity'}
        if v == 0 and math.copysign(1.0, v) < 0:
            return {TAG: 'n', 'v': '-0'}
        return v
    if isinstance(v, _orig_datetime):
        aware = v if v.tzinfo else v.replace(tzinfo=_UTC)
        return {TAG: 'd', 'v': round(aware.timestamp() * 1000)}
    if isinstance(v, _orig_date):
        return {TAG: 'd', 'v': round(_orig_datetime(v.year, v.month, v.day, tzinfo=_UTC).timestamp() * 1000)}
    if depth > 200:
        fail('nesting deeper than 200')
    ancestors = ancestors if ancestors is not None else set()
    if id(v) in ancestors:
        fail('a circular reference')
    ancestors.add(id(v))
    try:
        d = depth + 1
        if isinstance(v, (list, tuple)):
            return [_enc(x, path + '[' + str(i) + ']', d, ancestors) for i, x in enumerate(v)]
        if isinstance(v, (set, frozenset)):
            return {TAG: 's', 'v': [_enc(x, path + '<item ' + str(i) + '>', d, ancestors) for i, x in enumerate(v)]}
        if isinstance(v, dict):
            if not isinstance(v, _Map) and all(isinstance(k, str) for k in v):
                if TAG in v:
                    return {TAG: 'o', 'v': [[k, _enc(x, path + '.' + k, d, ancestors)] for k, x in v.items()]}
                return {k: _enc(x, path + '.' + k, d, ancestors) for k, x in v.items()}
            return {TAG: 'm', 'v': [[_enc(k, path + '<key ' + str(i) + '>', d, ancestors),
                                     _enc(x, path + '.get(' + str(i) + ')', d, ancestors)]
                                    for i, (k, x) in enumerate(v.items())]}
        # numpy and pandas values, as their plain Python equivalents.
        to_dict = getattr(v, 'to_dict', None)
        if callable(to_dict) and hasattr(v, 'columns'):
            return _enc(to_dict(orient='records'), path, d, ancestors)
        for name in ('to_dict', 'tolist', 'item'):
            fn = getattr(v, name, None)
            if callable(fn):
                return _enc(fn(), path, d, ancestors)
    finally:
        ancestors.discard(id(v))
    fail('a value of type ' + type(v).__name__)

def _hashable(x):
    if isinstance(x, list):
        return tuple(_hashable(y) for y in x)
    return x

def _dec(v):
    if isinstance(v, list):
        return [_dec(x) for x in v]
    if not isinstance(v, dict):
        return v
    tag = v.get(TAG)
    if tag is None:
        return {k: _dec(x) for k, x in v.items()}
    inner = v.get('v')
    if tag == 'u':
        return None
    if tag == 'd':
        return None if inner is None else _orig_datetime.fromtimestamp(inner / 1000, _UTC)
    if tag == 'n':
        return -0.0 if inner == '-0' else float(inner.replace('Infinity', 'inf'))
    if tag == 'b':
        return int(inner)
    if tag == 'm':
        return _Map((_hashable(_dec(k)), _dec(x)) for k, x in inner)
    if tag == 's':
        items = [_dec(x) for x in inner]
        try:
            return set(_hashable(x) for x in items)
        except TypeError:
            return items
    if tag == 'o':
        return {k: _dec(x) for k, x in inner}
    return {k: _dec(x) for k, x in v.items()}

def _encode(v, root='value'):
    return _dumps(_enc(v, root), separators=(',', ':'), ensure_ascii=False, allow_nan=False)

# ---- errors the program sees -------------------------------------------------------------------------------
class ToolError(Exception):
    def __init__(self, message, code='TOOL_ERROR', details=None):
        super().__init__(message)
        self.code, self.message, self.details = code, message, details

class NoSuchToolError(ToolError): pass
class ToolValidationError(ToolError): pass
class ToolRejectedError(ToolError): pass
class InputTimeoutError(ToolError): pass

_ERRORS = {c.__name__: c for c in (ToolError, NoSuchToolError, ToolValidationError, ToolRejectedError, InputTimeoutError)}
_BY_CODE = {'NO_SUCH_TOOL': NoSuchToolError, 'TOOL_VALIDATION': ToolValidationError,
            'TOOL_REJECTED': ToolRejectedError, 'INPUT_TIMEOUT': InputTimeoutError}

class _FinalAnswer(BaseException):
    pass

# ---- host calls ----------------------------------------------------------------------------------------------
_clock = [0]
_counter = [0]
_futures = {}
_early = {}

def _issue(msg):
    _counter[0] += 1
    msg['id'] = 'call-' + str(_counter[0])
    _send(msg)
    return msg['id']

def _result(msg):
    if isinstance(msg.get('clock'), (int, float)):
        _clock[0] = msg['clock']
    payload = _loads(msg['payload'])
    if msg.get('ok'):
        return True, _dec(payload)
    err = payload if isinstance(payload, dict) else {}
    code = str(err.get('code', 'TOOL_ERROR'))
    cls = _ERRORS.get(str(err.get('name'))) or _BY_CODE.get(code, ToolError)
    return False, cls(str(err.get('message', 'the tool failed')), code, err.get('details'))

def _dispatch(msg):
    if msg.get('t') != 'outcome':
        return
    fut = _futures.pop(msg['id'], None)
    if fut is None:
        _early[msg['id']] = msg
        return
    ok, value = _result(msg)
    if not fut.done():
        (fut.set_result if ok else fut.set_exception)(value)

def _wait_sync(call_id):
    while call_id not in _early:
        _dispatch(_recv())
    ok, value = _result(_early.pop(call_id))
    if ok:
        return value
    raise value

def _call_sync(msg):
    return _wait_sync(_issue(msg))

async def _call_async(msg):
    call_id = _issue(msg)
    if call_id in _early:
        ok, value = _result(_early.pop(call_id))
        if ok:
            return value
        raise value
    fut = asyncio.get_running_loop().create_future()
    _futures[call_id] = fut
    return await fut

def _make_tool(ns, name, params):
    def pack(args, kwargs):
        if params:
            packed = dict(zip(params, args))
            packed.update(kwargs)
            return packed
        if args:
            if len(args) == 1 and isinstance(args[0], dict) and not kwargs:
                return args[0]
            raise TypeError(ns + '.' + name + '() takes keyword arguments')
        return kwargs
    def call(*args, **kwargs):
        return _call_sync({'t': 'call', 'ns': ns, 'name': name, 'args': _encode(pack(args, kwargs), 'args')})
    async def call_async(*args, **kwargs):
        return await _call_async({'t': 'call', 'ns': ns, 'name': name, 'args': _encode(pack(args, kwargs), 'args')})
    call.__name__, call_async.__name__ = name, name + '_async'
    return call, call_async

def _namespace(ns, names):
    """The object a namespace's tools hang on: any other name is a NoSuchToolError listing what there is (as the
    JavaScript driver does). It keeps nothing else the program could mistake for a tool."""
    listing = ', '.join(names) or '(none)'
    class Namespace:
        def __getattr__(self, attr):
            if attr.startswith('__'):
                raise AttributeError(attr)
            raise NoSuchToolError('no tool ' + ns + '.' + attr + '; available: ' + listing, 'NO_SUCH_TOOL',
                                  {'available': list(names)})
        def __repr__(self):
            return '<tools ' + ns + '>'
    return Namespace()

# ---- determinism ---------------------------------------------------------------------------------------------
class _ClockMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, cls._orig)
    def __subclasscheck__(cls, sub):
        return issubclass(sub, cls._orig)

class _DateTime(_orig_datetime, metaclass=_ClockMeta):
    _orig = _orig_datetime
    @classmethod
    def now(cls, tz=None):
        t = _orig_datetime.fromtimestamp(_clock[0] / 1000, tz or _UTC)
        return t if tz else t.replace(tzinfo=None)
    @classmethod
    def utcnow(cls):
        return _orig_datetime.fromtimestamp(_clock[0] / 1000, _UTC).replace(tzinfo=None)
    @classmethod
    def today(cls):
        return cls.now()

class _Date(_orig_date, metaclass=_ClockMeta):
    _orig = _orig_date
    @classmethod
    def today(cls):
        return _orig_datetime.fromtimestamp(_clock[0] / 1000, _UTC).date()

_real_monotonic = time.monotonic
_datetime_module = datetime

class _UserDatetime(type(datetime)):
    """What the program's \`import datetime\` gives: the real module with now() and today() on the journaled clock.
    Libraries keep the real module (pandas subclasses its C types)."""
    def __getattr__(self, name):
        return getattr(_datetime_module, name)

_user_datetime = _UserDatetime('datetime')
_user_datetime.datetime, _user_datetime.date = _DateTime, _Date

def _user_builtins(allowed):
    """The program's builtins: its own import statements go through the policy (allowed_libraries); what a
    library imports for itself does not (libraries use the real builtins)."""
    real = builtins.__import__
    def _import(name, globals=None, locals=None, fromlist=(), level=0):
        if level == 0 and allowed is not None and name.split('.')[0] not in allowed:
            listed = ', '.join(sorted(allowed)) or 'none'
            raise ImportError('import of ' + repr(name.split('.')[0]) + ' is not allowed for this task (allowed_libraries: ' + listed + ')', name=name)
        if name == 'datetime' and level == 0:
            return _user_datetime
        top = name.split('.')[0] if level == 0 else ''
        if top == 'asyncio':
            _asyncio()
        module = real(name, globals, locals, fromlist, level)
        if top == 'subprocess':
            _guard_subprocess()
        return module
    b = dict(builtins.__dict__)
    b['__import__'] = _import
    return b

_NO_PROCESSES = 'starting processes is not allowed for this task (tool_constraints.allow_subprocesses)'

def _install_filter(blob):
    """A second seccomp filter, on top of bwrap's: execve and execveat fail with EPERM from here on, so no
    program can start another, whatever it calls (forking stays allowed)."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    class _Prog(ctypes.Structure):
        _fields_ = [('len', ctypes.c_ushort), ('filter', ctypes.c_void_p)]
    buf = ctypes.create_string_buffer(blob, len(blob))
    prog = _Prog(len(blob) // 8, ctypes.cast(buf, ctypes.c_void_p))
    nr = {'x86_64': 317, 'aarch64': 277}.get(os.uname().machine)
    libc.prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS (bwrap set it already)
    if nr is None or libc.syscall(nr, 1, 0, ctypes.byref(prog)) != 0:
        raise RuntimeError('cannot install the no-exec filter (errno ' + str(ctypes.get_errno()) + ')')

def _command_of(args, shell):
    if isinstance(args, (str, bytes)):
        text = args.decode() if isinstance(args, bytes) else args
        return text.strip().split()[0] if shell and text.strip() else text
    first = list(args)[0] if args else ''
    return os.fsdecode(first)

_check = [None]

def _guard_subprocess():
    """subprocess.Popen asks the policy first (for a clear error; the kernel refuses execve anyway when processes
    are off). Done when the program imports subprocess, or at once when commands are blocked."""
    import subprocess
    check = _check[0]
    if check is None or getattr(subprocess.Popen, '_cc_guarded', False):
        return
    execute = subprocess.Popen._execute_child
    def _execute_child(self, args, executable, *rest, **kw):
        shell = rest[-1] if rest and isinstance(rest[-1], bool) else kw.get('shell', False)
        check(os.fsdecode(executable) if executable else _command_of(args, shell))
        return execute(self, args, executable, *rest, **kw)
    subprocess.Popen._execute_child = _execute_child
    subprocess.Popen._cc_guarded = True

def _process_policy(policy, exec_filter):
    blocked = set(policy.get('blockedCommands') or [])
    allow = bool(policy.get('allowSubprocesses'))
    def check(command):
        if not allow:
            raise PermissionError(_NO_PROCESSES)
        if command in blocked or os.path.basename(command) in blocked:
            raise PermissionError('starting ' + repr(command) + ' is not allowed for this task (tool_constraints.blocked_commands)')
    _check[0] = check
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
    if not allow and exec_filter:
        _install_filter(binascii.a2b_base64(exec_filter))

def _deterministic(seed, clock):
    _clock[0] = clock
    random.seed(seed)
    rng = random.Random(seed ^ 0x5DEECE66D)
    os.urandom = lambda n: rng.randbytes(n)
    random._urandom = os.urandom
    time.time = lambda: _clock[0] / 1000
    time.time_ns = lambda: int(_clock[0]) * 1_000_000
    time.monotonic = time.perf_counter = time.time
    time.monotonic_ns = time.perf_counter_ns = time.time_ns
    def sleep(seconds):
        _call_sync({'t': 'timer', 'ms': max(0, float(seconds) * 1000)})
    time.sleep = sleep

_loop = []

def _asyncio():
    """Sets asyncio up once, the first time the program needs it (a top-level await, an import of asyncio): a
    loop whose selector reads the host, asyncio.sleep as a host timer, the policy asyncio.run() uses."""
    global asyncio
    if _loop:
        return _loop[0]
    import asyncio as aio, selectors
    asyncio = aio
    class _HostSelector(selectors.BaseSelector):
        """Reads the host's next outcome only when every task waits (the loop would block): the host alone decides
        the order of deliveries, as it does for JavaScript."""
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
            if (timeout is None or timeout > 0) and _futures:
                _dispatch(_recv())
                return self._inner.select(0)
            return self._inner.select(timeout)

    class _Loop(asyncio.SelectorEventLoop):
        def __init__(self):
            super().__init__(_HostSelector())
        def time(self):
            # The loop schedules by the real clock; the program sees the journaled one.
            return _real_monotonic()
    async def asleep(seconds, result=None):
        await _call_async({'t': 'timer', 'ms': max(0, float(seconds) * 1000)})
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

# ---- the program ---------------------------------------------------------------------------------------------
def _line_of(exc):
    if isinstance(exc, SyntaxError) and exc.filename == '<program>':
        return exc.lineno
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == '<program>':
            line = tb.tb_lineno
        tb = tb.tb_next
    return line

def _text(exc):
    try:
        text = str(exc)
        return text if text else _name(exc)
    except BaseException:
        return 'an exception whose str() failed'

def _name(exc):
    try:
        return str(type(exc).__name__)
    except BaseException:
        return 'Exception'

def _code_of(exc):
    if isinstance(exc, RecursionError):
        return 'STACK_OVERFLOW'
    if isinstance(exc, MemoryError):
        return 'MEMORY_LIMIT'
    if isinstance(exc, OSError) and exc.errno == errno.ENOMEM:
        return 'MEMORY_LIMIT'
    if isinstance(exc, ImportError) and 'failed to map segment' in str(exc):
        # The dynamic loader's mmap over RLIMIT_AS (import pandas under a small limit).
        return 'MEMORY_LIMIT'
    if isinstance(exc, OSError) and exc.errno in (errno.EFBIG, errno.ENOSPC, errno.EDQUOT):
        # A file over RLIMIT_FSIZE (Python ignores SIGXFSZ, so the write fails), a full /tmp or /dev/shm.
        return 'OUTPUT_LIMIT'
    if isinstance(exc, ToolError):
        return str(exc.code)
    return 'GUEST_ERROR'

def _failure(exc, code=None):
    """The program's exception as the host sees it. The exception is the program's: its str(), its class's
    __name__, even isinstance() (a __class__ property) may raise; the report must still go out."""
    try:
        code = code or _code_of(exc)
    except BaseException:
        code = 'GUEST_ERROR'
    message = _text(exc)
    if issubclass(type(exc), SystemExit):
        message = 'the program called exit(' + _text(repr(exc.code)) + ')'
    err = {'code': code, 'name': _name(exc), 'message': message}
    try:
        line = _line_of(exc)
    except BaseException:
        line = None
    if isinstance(line, int):
        err['line'] = line
    return err

def _compile(code):
    tree = ast.parse(code, '<program>', 'exec')
    last = tree.body[-1] if tree.body else None
    if isinstance(last, ast.Expr):
        # Notebook style: the last expression statement is the value.
        target = ast.Name('__cc_value__', ast.Store())
        tree.body[-1] = ast.copy_location(ast.Assign([target], last.value), last)
        ast.fix_missing_locations(tree)
    return compile(tree, '<program>', 'exec', flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)

def _limits(limits):
    def cap(kind, value):
        if value:
            soft, hard = resource.getrlimit(kind)
            value = int(value) if hard == resource.RLIM_INFINITY else min(int(value), hard)
            resource.setrlimit(kind, (value, value))
    with open('/proc/self/statm') as f:
        virtual = int(f.read().split()[0]) * resource.getpagesize()
    if limits.get('memoryBytes'):
        cap(resource.RLIMIT_AS, virtual + limits['memoryBytes'])
    cap(resource.RLIMIT_CPU, limits.get('cpuSeconds'))
    cap(resource.RLIMIT_FSIZE, limits.get('fileBytes'))
    cap(resource.RLIMIT_NPROC, limits.get('processes'))
    cap(resource.RLIMIT_NOFILE, limits.get('files'))

_STEPS = '# __cc_steps__ = '

def _earlier_steps(code):
    """An agent's later step names the earlier successful steps on its first line (a comment to Python): they run
    first, silently, in the same globals, so their names are defined (their tool calls replay from the journal)."""
    first = code.split('\n', 1)[0]
    return _loads(first[len(_STEPS):]) if first.startswith(_STEPS) else []

class _Quiet:
    def write(self, text):
        return len(text)
    def flush(self):
        pass

_CO_COROUTINE = 0x80

def _run_quiet(block, program):
    out, err = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = _Quiet()
    try:
        code = compile(ast.parse(block, '<step>', 'exec'), '<step>', 'exec', flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        result = eval(code, program)
        if _CO_COROUTINE & code.co_flags:
            _asyncio().run_until_complete(result)
    except _FinalAnswer:
        pass
    finally:
        sys.stdout, sys.stderr = out, err

_WORKSPACE = '/workspace'
_MAX_ARTIFACTS = 1000

def _put_files(files):
    """Writes the input files; returns what each one was, so only files the program wrote come back."""
    seen = {}
    for f in files:
        path = os.path.join(_WORKSPACE, f['name'])
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'wb') as out:
            out.write(binascii.a2b_base64(f['data']))
        st = os.stat(path)
        seen[f['name']] = (st.st_size, st.st_mtime_ns)
    return seen

# What comes back of the workspace in all (base64 grows it by a third; the host takes lines up to 64 MiB).
_MAX_ARTIFACT_BYTES = 32 * 1024 * 1024

def _artifacts(inputs):
    found, total, left_out = [], 0, []
    for folder, dirs, names in os.walk(_WORKSPACE):
        dirs.sort()
        for n in sorted(names):
            path = os.path.join(folder, n)
            rel = os.path.relpath(path, _WORKSPACE)
            try:
                st = os.lstat(path)
                if not os.path.isfile(path) or os.path.islink(path) or inputs.get(rel) == (st.st_size, st.st_mtime_ns):
                    continue
                if len(found) >= _MAX_ARTIFACTS or total + st.st_size > _MAX_ARTIFACT_BYTES:
                    left_out.append(rel)
                    continue
                with open(path, 'rb') as f:
                    data = f.read()
            except OSError:
                continue
            total += len(data)
            found.append({'name': rel, 'data': binascii.b2a_base64(data, newline=False).decode()})
    if left_out:
        shown = ', '.join(left_out[:5]) + (' ...' if len(left_out) > 5 else '')
        _send({'t': 'log', 'level': 'warn', 'message': 'files not returned (over ' + str(_MAX_ARTIFACTS) + ' files or '
               + str(_MAX_ARTIFACT_BYTES) + ' bytes of artifacts): ' + shown})
    return found

def _clear_frames(tb):
    while tb is not None:
        try:
            tb.tb_frame.clear()
        except RuntimeError:
            pass
        tb = tb.tb_next

def _collect(inputs):
    try:
        return _artifacts(inputs or {})
    except BaseException:
        return []

def _usage():
    u = resource.getrusage(resource.RUSAGE_SELF)
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = u.ru_utime + u.ru_stime + c.ru_utime + c.ru_stime
    return {'cpuMs': round(cpu * 1000, 3), 'memoryBytes': max(u.ru_maxrss, c.ru_maxrss) * 1024}

def _prewarm():
    """While the interpreter waits in the pool, import what programs often need, stopping as soon as its start
    message is there (a cold start does not wait for these)."""
    # A cold start's message follows the ready signal within a millisecond or two.
    if select.select([_in], [], [], 0.01)[0]:
        return
    for name in ('asyncio', 'subprocess', 'ctypes'):
        if select.select([_in], [], [], 0)[0]:
            return
        __import__(name)

def _main():
    _prewarm()
    start = _recv()
    names = {}
    for b in start['tools']:
        names.setdefault(b['namespace'], []).append(b['name'])
    namespaces = {ns: _namespace(ns, listed) for ns, listed in names.items()}
    for b in start['tools']:
        call, call_async = _make_tool(b['namespace'], b['name'], b.get('params'))
        if b['name'].startswith('__'):
            # Python's own protocol (__class__, __dict__, ...): a tool cannot be one, nor break the namespace.
            continue
        object.__setattr__(namespaces[b['namespace']], b['name'], call)
        object.__setattr__(namespaces[b['namespace']], b['name'] + '_async', call_async)
    def final_answer(value):
        raise _FinalAnswer(value)
    policy = start.get('policy') or {}
    allowed = policy.get('allowedLibraries')
    program = {'__name__': '__main__', '__builtins__': _user_builtins(None if allowed is None else set(allowed)),
               'final_answer': final_answer}
    program.update(namespaces)
    program.update(_ERRORS)
    _deterministic(start['seed'], start['clock'])
    logs = (_Log('log'), _Log('error'))
    sys.stdout, sys.stderr = logs
    def flush():
        # The runner's own log streams: the program may have replaced sys.stdout with anything.
        for stream in logs:
            try:
                stream.flush()
            except BaseException:
                pass
    sys.stdin = open(os.devnull)
    try:
        code = _compile(start['code'])
    except BaseException as exc:
        # Only the program's own text is a SYNTAX_ERROR; a SyntaxError raised as it runs is a GUEST_ERROR.
        syntax = isinstance(exc, (SyntaxError, ValueError))
        _send({'t': 'done', 'ok': False, 'error': _failure(exc, 'SYNTAX_ERROR' if syntax else None),
               'resources': _usage()})
        return
    # Address space set aside (inside the baseline the memory limit is added to) for reporting a MemoryError.
    reserve = [bytearray(2 * 1024 * 1024)]
    inputs = {}
    try:
        inputs = _put_files(start.get('files') or [])
        _process_policy(policy, start.get('execFilter'))
        _limits(start.get('limits', {}))
        for block in _earlier_steps(start['code']):
            _run_quiet(block, program)
        program.pop('__cc_value__', None)
        result = eval(code, program)
        if _CO_COROUTINE & code.co_flags:
            _asyncio().run_until_complete(result)
        value, final = program.get('__cc_value__'), False
        # An awaitable last expression is awaited, as a JavaScript program's returned promise is.
        if hasattr(value, '__await__'):
            value = _asyncio().run_until_complete(value)
    except _FinalAnswer as given:
        value, final = (given.args[0] if given.args else None), True
    except BaseException as exc:
        if isinstance(exc, MemoryError):
            # Reporting needs memory: free the reserve and what the program holds (its globals, the locals of its
            # frames; the traceback keeps its line numbers).
            reserve.clear()
            program.clear()
            _clear_frames(exc.__traceback__)
        try:
            flush()
            _send({'t': 'done', 'ok': False, 'error': _failure(exc), 'resources': _usage(), 'artifacts': _collect(inputs)})
        except MemoryError:
            _out_of_memory(program)
        return
    flush()
    if start['code'].startswith(_STEPS):
        # An agent's step says whether it gave the final answer, as the composed JavaScript does.
        value = {'final': final, 'value': value}
    try:
        payload = _encode(value, 'result')
    except BaseException as exc:
        try:
            message = 'the result cannot be sent: ' + _text(exc)
            _send({'t': 'done', 'ok': False, 'error': {'code': 'RESULT_INVALID', 'name': _name(exc), 'message': message}})
        except MemoryError:
            _out_of_memory(program)
        return
    _send({'t': 'done', 'ok': True, 'value': payload, 'resources': _usage(), 'artifacts': _collect(inputs)})

def _out_of_memory(program):
    # The program's data fills the address space, so even the report could not be made (a 1e6-deep list just
    # under the limit): let the program's globals go, then report with what that freed.
    program.clear()
    _send({'t': 'done', 'ok': False, 'error': {'code': 'MEMORY_LIMIT', 'name': 'MemoryError',
                                                'message': 'the program ran out of memory'}})

_main()
sys.stdout = sys.__stdout__
os._exit(0)
`;
