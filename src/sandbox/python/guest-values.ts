/** The start of the guest runner: the protocol fds, the tagged value codec, the errors the program sees. Part of GUEST_RUNNER (guest-runner.ts). */
export const GUEST_VALUES = String.raw`
import sys, os
# Nothing is imported from the working directory (python3 -P does this too, from 3.11 on).
sys.path[:] = [p for p in sys.path if p not in ('', '.', '/workspace')]
_out = os.fdopen(3, 'wb')
# The host's messages are read off fd 4 by _recv, with no reader of Python's between: a text reader read ahead
# into a buffer select() cannot see, so a start message that came with the prewarm one waited for the prewarm's
# delay and imports (ADR 0061).
_IN_FD = 4
_in_buf = [b'', 0]
# The sandbox is set up (bwrap is done with it): the host may hand out this interpreter, and kill it safely. Said
# before the imports, so that the host's own preparations for a cold start overlap them.
_out.write(b'{"t":"ready"}\n')
_out.flush()

# asyncio, subprocess and ctypes are imported when first needed (or while the interpreter waits in the pool). The
# json and ast packages are not imported at all: their C halves do (json pulls in re, ast contextlib and enum:
# two thirds of the runner's start).
import errno, math, random, time, resource, builtins, binascii, select, _ast
# The C half only: datetime.py defines the whole module in Python before it takes _datetime's types (a
# millisecond of a cold start). The program's own import of datetime gets the same types.
import _datetime as datetime
asyncio = None

def _codec():
    try:
        import _json
        class _Context:
            strict, object_hook, object_pairs_hook = True, None, None
            parse_float, parse_int, memo = float, int, {}
            def parse_constant(name):
                raise ValueError('not JSON: ' + name)
        scan = _json.make_scanner(_Context)
        def loads(text):
            end = len(text.rstrip())
            start = len(text) - len(text.lstrip())
            try:
                value, at = scan(text, start)
            except StopIteration as stop:
                raise ValueError('not JSON at ' + str(stop.value)) from None
            if at != end:
                raise ValueError('not JSON: extra data at ' + str(at))
            return value
        def default(o):
            raise TypeError('Object of type ' + type(o).__name__ + ' is not JSON serializable')
        encoders = {}
        def dumps(obj, ensure_ascii=False, allow_nan=True):
            key = (ensure_ascii, allow_nan)
            if key not in encoders:
                string = _json.encode_basestring_ascii if ensure_ascii else _json.encode_basestring
                encoders[key] = _json.make_encoder({}, default, string, None, ':', ',', False, False, allow_nan)
            return ''.join(encoders[key](obj, 0))
        if loads('{"a":[1,2.5,"x",null,true]}') == {'a': [1, 2.5, 'x', None, True]} and dumps({'a': [1, 'é']}) == '{"a":[1,"é"]}':
            return dumps, loads
    except BaseException:
        pass
    import json
    return (lambda obj, ensure_ascii=False, allow_nan=True: json.dumps(obj, separators=(',', ':'), ensure_ascii=ensure_ascii, allow_nan=allow_nan)), json.loads

_dumps, _loads = _codec()

def _send(msg):
    line = _dumps(msg) + '\n'
    try:
        data = line.encode('utf-8')
    except UnicodeEncodeError:
        # A lone surrogate (a valid str, as it is a valid JS string) has no UTF-8 form: JSON escapes carry it.
        data = (_dumps(msg, ensure_ascii=True) + '\n').encode('ascii')
    _out.write(data)
    _out.flush()

def _recv():
    data, at = _in_buf
    nl = data.find(b'\n', at)
    if nl < 0:
        parts, length = [data[at:]], len(data) - at
        while True:
            chunk = os.read(_IN_FD, 262144)
            if not chunk:
                os._exit(70)
            parts.append(chunk)
            nl = chunk.find(b'\n')
            if nl >= 0:
                nl += length
                break
            length += len(chunk)
        data, at = b''.join(parts), 0
    _in_buf[0], _in_buf[1] = data, nl + 1
    return _loads(data[at:nl].decode('utf-8'))

def _waiting(timeout=0):
    """Whether a message from the host is there to read (within timeout seconds)."""
    return _in_buf[0].find(b'\n', _in_buf[1]) >= 0 or bool(select.select([_IN_FD], [], [], timeout)[0])

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
        # A dataclass as its fields, an Enum as its value (as programs print them); only when the program has them.
        dataclasses, enum = sys.modules.get('dataclasses'), sys.modules.get('enum')
        if dataclasses and dataclasses.is_dataclass(v) and not isinstance(v, type):
            return _enc({f.name: getattr(v, f.name) for f in dataclasses.fields(v)}, path, d, ancestors)
        if enum and isinstance(v, enum.Enum):
            return _enc(v.value, path, d, ancestors)
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
    return _dumps(_enc(v, root), allow_nan=False)

# ---- errors the program sees -------------------------------------------------------------------------------
class ToolError(Exception):
    def __init__(self, message, code='TOOL_ERROR', details=None):
        super().__init__(message)
        self.code, self.message, self.details = code, message, details

class NoSuchToolError(ToolError): pass
class ToolValidationError(ToolError): pass
class ToolRejectedError(ToolError): pass
class InputTimeoutError(ToolError): pass

class FetchError(ToolError, OSError):
    """A request refused or failed (codecall.fetch, http.client, urllib): its code is EGRESS_REFUSED (details
    reason: not_allowed, method, no_network_access...), EGRESS_LIMIT, EGRESS_TIMEOUT or EGRESS_FAILED. An OSError
    too, as network errors are (urllib wraps it in a URLError)."""

class FetchTimeoutError(FetchError, TimeoutError):
    """A request past its timeout (EGRESS_TIMEOUT): the program's own (urlopen's timeout=), the task's
    timeout_seconds or the operator's, whichever is shortest. A TimeoutError (socket.timeout) too, as CPython raises
    for a server that does not answer in time."""

FetchError.__module__ = FetchTimeoutError.__module__ = 'codecall'

_ERRORS = {c.__name__: c for c in (ToolError, NoSuchToolError, ToolValidationError, ToolRejectedError, InputTimeoutError)}
_BY_CODE = {'NO_SUCH_TOOL': NoSuchToolError, 'TOOL_VALIDATION': ToolValidationError,
            'TOOL_REJECTED': ToolRejectedError, 'APPROVAL_EXPIRED': ToolRejectedError,
            'INPUT_TIMEOUT': InputTimeoutError}

class _FinalAnswer(BaseException):
    pass

`;
