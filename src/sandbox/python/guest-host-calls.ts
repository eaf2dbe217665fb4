/** Host calls from the guest: sync and async tool calls, outcomes in the host's order, the tool namespaces. Part of GUEST_RUNNER (guest-runner.ts). */
export const GUEST_HOST_CALLS = String.raw`# ---- host calls ----------------------------------------------------------------------------------------------
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

`;
