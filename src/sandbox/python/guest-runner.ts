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
import os, errno, json, math, ast, asyncio, random, time, datetime, resource, selectors, traceback, builtins

_out = os.fdopen(3, 'w', encoding='utf-8', buffering=1)
_in = os.fdopen(4, 'r', encoding='utf-8')
_dumps, _loads = json.dumps, json.loads

def _send(msg):
    line = _dumps(msg, separators=(',', ':'), ensure_ascii=False) + '\n'
    try:
        line.encode('utf-8')
    except UnicodeEncodeError:
        # A lone surrogate (the program's text) cannot be UTF-8: JSON escapes it instead.
        line = _dumps(msg, separators=(',', ':')) + '\n'
    _out.write(line)
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

def _enc(v, depth=0):
    if depth > 200:
        raise ValueError('the value is nested too deeply')
    d = depth + 1
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
    if isinstance(v, (list, tuple)):
        return [_enc(x, d) for x in v]
    if isinstance(v, (set, frozenset)):
        return {TAG: 's', 'v': [_enc(x, d) for x in v]}
    if isinstance(v, dict):
        if all(isinstance(k, str) for k in v):
            if TAG in v:
                return {TAG: 'o', 'v': [[k, _enc(x, d)] for k, x in v.items()]}
            return {k: _enc(x, d) for k, x in v.items()}
        return {TAG: 'm', 'v': [[_enc(k, d), _enc(x, d)] for k, x in v.items()]}
    # numpy and pandas values, as their plain Python equivalents.
    to_dict = getattr(v, 'to_dict', None)
    if callable(to_dict) and hasattr(v, 'columns'):
        return _enc(to_dict(orient='records'), d)
    for name in ('to_dict', 'tolist', 'item'):
        fn = getattr(v, name, None)
        if callable(fn):
            return _enc(fn(), d)
    raise TypeError('cannot send a value of type ' + type(v).__name__)

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
        return {_hashable(_dec(k)): _dec(x) for k, x in inner}
    if tag == 's':
        items = [_dec(x) for x in inner]
        try:
            return set(_hashable(x) for x in items)
        except TypeError:
            return items
    if tag == 'o':
        return {k: _dec(x) for k, x in inner}
    return {k: _dec(x) for k, x in v.items()}

def _encode(v):
    return _dumps(_enc(v), separators=(',', ':'), ensure_ascii=False, allow_nan=False)

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
        return _call_sync({'t': 'call', 'ns': ns, 'name': name, 'args': _encode(pack(args, kwargs))})
    async def call_async(*args, **kwargs):
        return await _call_async({'t': 'call', 'ns': ns, 'name': name, 'args': _encode(pack(args, kwargs))})
    call.__name__, call_async.__name__ = name, name + '_async'
    return call, call_async

class _Namespace:
    def __init__(self, name):
        object.__setattr__(self, '_name', name)
    def __getattr__(self, attr):
        if attr.startswith('__'):
            raise AttributeError(attr)
        raise NoSuchToolError('no tool ' + self._name + '.' + attr, 'NO_SUCH_TOOL')
    def __repr__(self):
        return '<tools ' + self._name + '>'

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

def _user_builtins():
    real = builtins.__import__
    def _import(name, globals=None, locals=None, fromlist=(), level=0):
        if name == 'datetime' and level == 0:
            return _user_datetime
        return real(name, globals, locals, fromlist, level)
    b = dict(builtins.__dict__)
    b['__import__'] = _import
    return b

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
    async def asleep(seconds, result=None):
        await _call_async({'t': 'timer', 'ms': max(0, float(seconds) * 1000)})
        return result
    time.sleep, asyncio.sleep = sleep, asleep

class _Loop(asyncio.SelectorEventLoop):
    def __init__(self):
        super().__init__(_HostSelector())
    def time(self):
        # The loop schedules by the real clock; the program sees the journaled one.
        return _real_monotonic()

# ---- output ----------------------------------------------------------------------------------------------------
class _Log:
    def __init__(self, level):
        self.level, self.buf = level, ''
    def write(self, text):
        self.buf += str(text)
        while '\n' in self.buf:
            line, self.buf = self.buf.split('\n', 1)
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
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        if frame.f_code.co_filename == '<program>':
            line = lineno
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

def _code(exc):
    if isinstance(exc, SyntaxError):
        return 'SYNTAX_ERROR'
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

def _failure(exc):
    """The program's exception as the host sees it. The exception is the program's: its str(), its class's
    __name__, even isinstance() (a __class__ property) may raise; the report must still go out."""
    try:
        code = _code(exc)
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

def _usage():
    u = resource.getrusage(resource.RUSAGE_SELF)
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = u.ru_utime + u.ru_stime + c.ru_utime + c.ru_stime
    return {'cpuMs': round(cpu * 1000, 3), 'memoryBytes': max(u.ru_maxrss, c.ru_maxrss) * 1024}

def _main():
    start = _recv()
    namespaces = {}
    for b in start['tools']:
        ns = namespaces.setdefault(b['namespace'], _Namespace(b['namespace']))
        call, call_async = _make_tool(b['namespace'], b['name'], b.get('params'))
        if b['name'].startswith('__'):
            # Python's own protocol (__class__, __dict__, ...): a tool cannot be one, nor break the namespace.
            continue
        object.__setattr__(ns, b['name'], call)
        object.__setattr__(ns, b['name'] + '_async', call_async)
    def final_answer(value):
        raise _FinalAnswer(value)
    program = {'__name__': '__main__', '__builtins__': _user_builtins(), 'final_answer': final_answer}
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
    class _Policy(asyncio.DefaultEventLoopPolicy):
        def new_event_loop(self):
            return _Loop()
    # asyncio.run() in the program makes its loops through the policy, so they read the host too.
    asyncio.set_event_loop_policy(_Policy())
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        code = _compile(start['code'])
        _limits(start.get('limits', {}))
        result = eval(code, program)
        if asyncio.iscoroutine(result):
            loop.run_until_complete(result)
        value = program.get('__cc_value__')
    except _FinalAnswer as given:
        value = given.args[0] if given.args else None
    except BaseException as exc:
        try:
            flush()
            _send({'t': 'done', 'ok': False, 'error': _failure(exc), 'resources': _usage()})
        except MemoryError:
            _out_of_memory(program)
        return
    flush()
    try:
        payload = _encode(value)
    except BaseException as exc:
        try:
            message = 'the result cannot be sent: ' + _text(exc)
            _send({'t': 'done', 'ok': False, 'error': {'code': 'RESULT_INVALID', 'name': _name(exc), 'message': message}})
        except MemoryError:
            _out_of_memory(program)
        return
    _send({'t': 'done', 'ok': True, 'value': payload, 'resources': _usage()})

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
