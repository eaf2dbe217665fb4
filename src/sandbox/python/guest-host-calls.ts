/** Host calls from the guest: sync and async tool calls, outcomes in the host's order, the tool namespaces. Part of GUEST_RUNNER (guest-runner.ts). */
export const GUEST_HOST_CALLS = String.raw`# ---- host calls ----------------------------------------------------------------------------------------------
import _thread
_clock = [0]
_counter = [0]
# Tool calls and host timers come from this thread only: the host orders deliveries, and a second thread reading
# fd 4 would take the main thread's outcomes (a hang, about one run in three).
_MAIN_THREAD = _thread.get_ident()
_FROM_THREAD = ('a tool call from a thread other than the main thread is not supported: threads would make the order '
                'of tool calls (and of their journal) differ between runs; use asyncio and <tool>_async '
                '(asyncio.gather) for concurrent calls')

_futures = {}
_early = {}
# Calls the program gave up on (an asyncio task cancelled while it awaited one): their outcome is dropped.
_abandoned = set()

# ---- the replay script (ADR 0010): recorded outcomes served here, with no round trip to the host ----
_ISSUED, _DROPPED = 1, 2

class _Script:
    """Step k is delivered once steps < k have been and its call was issued with the step's tool and argument
    text; a call issued with other text is dropped from the script and goes to the host. Host outcomes wait for
    the script's end (they come later in delivery order)."""
    def __init__(self, steps):
        self.steps = steps
        self.pos = {s['callId']: i for i, s in enumerate(steps)}
        self.state = [0] * len(steps)
        self.next = 0
        self.held = []
        self.announced = False

    def claim(self, msg):
        i = self.pos.get(msg['id'])
        if i is None:
            return False
        step = self.steps[i]
        if msg['t'] == 'timer':
            same = step['tool'] == 'timer' and float(step['args']) == msg['ms']
        else:
            same = step['tool'] == msg['ns'] + '.' + msg['name'] and step['args'] == msg['args']
        self.state[i] = _ISSUED if same else _DROPPED
        return same

    def take(self):
        """The next scripted outcome if its call was issued; the host hears of the replay's end before the last."""
        while self.next < len(self.steps):
            state = self.state[self.next]
            if state == _DROPPED:
                self.next += 1
                continue
            if state != _ISSUED:
                return None
            step = self.steps[self.next]
            self.next += 1
            if self.next >= len(self.steps):
                self.announce()
            return {'t': 'outcome', 'id': step['callId'], 'ok': step['ok'], 'payload': step['payload'],
                    'clock': step['clock']}
        return None

    def through(self):
        while self.next < len(self.steps) and self.state[self.next] == _DROPPED:
            self.next += 1
        return self.next >= len(self.steps)

    def announce(self):
        if not self.announced:
            self.announced = True
            _send({'t': 'replayDone'})

_replay = [None]
_released = []
# Reads of stored bodies (ADR 0046): never journaled, so never in a script; their outcomes are not held back.
_direct = set()

def _load_script(steps):
    if steps is not None:
        _replay[0] = _Script(steps)
        _script_through()

def _script_through():
    """Once every step is delivered or dropped the replay is over: what the host held back comes next."""
    script = _replay[0]
    if script is None or not script.through():
        return False
    script.announce()
    _replay[0] = None
    _released.extend(script.held)
    return True

def _issue(msg):
    if _thread.get_ident() != _MAIN_THREAD:
        raise RuntimeError(_FROM_THREAD)
    _counter[0] += 1
    msg['id'] = 'call-' + str(_counter[0])
    script = _replay[0]
    if script is not None and msg.get('ns') == 'egress' and msg.get('name') == 'body':
        _direct.add(msg['id'])
        _send(msg)
    elif script is not None and script.claim(msg):
        # The host counts it (maxToolCalls) and runs nothing.
        _send({'t': 'scripted', 'id': msg['id']})
    else:
        _send(msg)
        _script_through()
    return msg['id']

def _next_outcome():
    """The next delivery: the script's while it lasts, then what the host sent meanwhile, then the host's."""
    while _replay[0] is not None:
        msg = _replay[0].take()
        if msg is not None:
            return msg
        if _script_through():
            break
        # No scripted outcome can come before the program issues more calls, and it waits: keep what the host
        # sends (the host ends a replay that diverged), but for a body read's, the program's to have now.
        msg = _recv()
        if msg.get('t') == 'outcome' and msg.get('id') in _direct:
            _direct.discard(msg['id'])
            return msg
        _replay[0].held.append(msg)
    if _released:
        return _released.pop(0)
    return _recv()

def _result(msg):
    if isinstance(msg.get('clock'), (int, float)):
        _clock[0] = msg['clock']
    payload = _loads(msg['payload'])
    if msg.get('ok'):
        return True, _dec(payload)
    err = payload if isinstance(payload, dict) else {}
    code = str(err.get('code', 'TOOL_ERROR'))
    if code.startswith('EGRESS_'):
        cls = FetchTimeoutError if code == 'EGRESS_TIMEOUT' else FetchError
    else:
        cls = _ERRORS.get(str(err.get('name'))) or _BY_CODE.get(code, ToolError)
    return False, cls(str(err.get('message', 'the tool failed')), code, err.get('details'))

def _dispatch(msg):
    if msg.get('t') != 'outcome':
        return
    fut = _futures.pop(msg['id'], None)
    if fut is None:
        if msg['id'] in _abandoned:
            _abandoned.discard(msg['id'])
        else:
            _early[msg['id']] = msg
        return
    ok, value = _result(msg)
    wake = _wakes.pop(msg['id'], None)
    if wake is not None:
        # The loop's timer is due: at least its time has passed, whatever clock the host keeps.
        _clock[0] = max(_clock[0], wake)
    if not fut.done():
        (fut.set_result if ok else fut.set_exception)(value)

def _wait_sync(call_id):
    while call_id not in _early:
        _dispatch(_next_outcome())
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
    try:
        return await fut
    except asyncio.CancelledError:
        # Given up (task.cancel(), asyncio.wait_for's timeout) before its outcome came: a request is aborted on the
        # host, which journals it ABORTED (or its answer, when that came first), as for the JavaScript guest's
        # AbortSignal; a tool's call runs to its end. Its outcome, when it comes, is dropped.
        if _futures.pop(call_id, None) is not None:
            _abandoned.add(call_id)
            if msg.get('ns') == 'egress' and msg.get('name') != 'body':
                _send({'t': 'cancel', 'id': call_id})
        raise

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

def _python_name(name):
    if '.' in name:
        return name
    return ''.join(c if c.isascii() and (c.isalnum() or c == '_') else '_' for c in name)

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
