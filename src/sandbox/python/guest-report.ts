import { MAX_ARTIFACTS } from './artifact-caps.ts';

/** How the guest reports a failure, sets its limits and re-runs earlier agent steps. Part of GUEST_RUNNER (guest-runner.ts). */
export const GUEST_REPORT = String.raw`# ---- the program ---------------------------------------------------------------------------------------------
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
        # A file over RLIMIT_FSIZE (Python ignores SIGXFSZ, so the write fails), a full workspace, /tmp or /dev/shm.
        return 'FILE_LIMIT'
    if any(exc is e for e in _process_limit_errors):
        return 'PROCESS_LIMIT'
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
    try:
        # requests' errors over fetch (guest-requests.ts) name their code in str(): the report has it apart.
        if type(exc).__dict__.get('_cc_code_in_message') is True:
            message = _text(exc.message)
    except BaseException:
        pass
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
    if limits.get('cpuSeconds'):
        # RLIMIT_CPU counts from the process's start, the program's budget from now.
        used = _real_getrusage(resource.RUSAGE_SELF)
        cap(resource.RLIMIT_CPU, math.ceil(used.ru_utime + used.ru_stime) + limits['cpuSeconds'])
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
        code = compile(_unfence(block), '<step>', 'exec', flags=_ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        result = eval(code, program)
        if _CO_COROUTINE & code.co_flags:
            _asyncio().run_until_complete(result)
    except _FinalAnswer:
        pass
    except SystemExit as exc:
        if not _clean_exit(exc):
            raise
    finally:
        sys.stdout, sys.stderr = out, err

_WORKSPACE = '/workspace'
_MAX_ARTIFACTS = ${MAX_ARTIFACTS}

`;
