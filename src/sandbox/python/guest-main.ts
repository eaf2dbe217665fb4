import { MAX_ARTIFACT_BYTES } from './artifact-caps.ts';

/** Seconds a pooled interpreter waits before it imports asyncio and subprocess (ADR 0061). */
export const PREWARM_AFTER_SECONDS = 0.25;

/** The guest's workspace (input files, artifacts) and its main: start message to done. Part of GUEST_RUNNER (guest-runner.ts). */
export const GUEST_MAIN = String.raw`_PREWARM_AFTER = ${PREWARM_AFTER_SECONDS}

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
_MAX_ARTIFACT_BYTES = ${MAX_ARTIFACT_BYTES}

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

def _first_message():
    """A pooled interpreter is told to prewarm first: it prepares what nearly every execution needs (the no-exec
    filter's calls) at once, and imports what programs often need only once it has waited a while. A cold start's
    first message is its start message, with nothing imported."""
    msg = _recv()
    if msg.get('t') == 'serve':
        # A fork server (guest-fork-server.ts): this returns in an execution's own process, prepared.
        _serve(msg)
        return _recv()
    if msg.get('t') == 'prewarm':
        if not _waiting():
            _filter_prep()
        if not _waiting():
            _seed_ahead()
        # Not soon: in a stream of executions a pooled interpreter is handed out within tens of milliseconds, and
        # importing asyncio and subprocess (10-15 ms of CPU) in every one of them was most of the CPU a short
        # execution cost (ADR 0061; at 30 ms, executions per second fell from 42 to 26, ADR 0016).
        if not _waiting(_PREWARM_AFTER):
            for name in ('asyncio', 'subprocess'):
                if _waiting():
                    break
                _real_import(name)
        msg = _recv()
    return msg

def _main():
    start = _first_message()
    tools = []
    for b in start['tools']:
        if b['namespace'] == 'egress':
            # fetch's own calls (codecall.fetch, http.client): not a namespace of the program's.
            _egress_names.add(b['name'])
        else:
            tools.append(b)
    names = {}
    for b in tools:
        names.setdefault(b['namespace'], []).append(b['name'])
    namespaces = {ns: _namespace(ns, listed) for ns, listed in names.items()}
    # A name with a dot (an MCP server's tool, 'github.create_issue') is a member of a group object:
    # tools.github.create_issue(...); getattr(tools, 'github.create_issue') reaches it too.
    groups = {}
    for b in tools:
        group, dot, member = b['name'].partition('.')
        if dot and group and not group.startswith('__'):
            groups.setdefault((b['namespace'], group), []).append(member)
    for (ns, group), members in groups.items():
        object.__setattr__(namespaces[ns], group, _namespace(ns + '.' + group, members))
    for b in tools:
        call, call_async = _make_tool(b['namespace'], b['name'], b.get('params'))
        if b['name'].startswith('__'):
            # Python's own protocol (__class__, __dict__, ...): a tool cannot be one, nor break the namespace.
            continue
        object.__setattr__(namespaces[b['namespace']], b['name'], call)
        object.__setattr__(namespaces[b['namespace']], b['name'] + '_async', call_async)
        # A name Python cannot spell ('lookup-user') is also tools.lookup_user, unless a tool has that name.
        alias = _python_name(b['name'])
        if alias != b['name'] and alias not in names[b['namespace']]:
            object.__setattr__(namespaces[b['namespace']], alias, call)
            object.__setattr__(namespaces[b['namespace']], alias + '_async', call_async)
        group, dot, member = b['name'].partition('.')
        if (b['namespace'], group) in groups and not member.startswith('__'):
            object.__setattr__(getattr(namespaces[b['namespace']], group), member, call)
            object.__setattr__(getattr(namespaces[b['namespace']], group), member + '_async', call_async)
    def final_answer(*args, **kwargs):
        # final_answer(x), or final_answer(answer=x) as smolagents programs call it (value=x too).
        given = list(args) + [kwargs.pop(k) for k in ('answer', 'value') if k in kwargs]
        if kwargs or len(given) != 1:
            raise TypeError('final_answer() takes one value: final_answer(x) or final_answer(answer=x)')
        raise _FinalAnswer(given[0])
    policy = start.get('policy') or {}
    allowed = policy.get('allowedLibraries')
    # A copy: what the program does to its builtins stays out of the runner's (__import__ is the policy's in both).
    program = {'__name__': '__main__', '__builtins__': dict(builtins.__dict__), 'final_answer': final_answer}
    program.update(namespaces)
    # Programs written for Cloudflare's Code Mode call their tools as codemode.x(): the same tools.
    if 'codemode' not in namespaces and 'tools' in namespaces:
        program['codemode'] = namespaces['tools']
    program.update(_ERRORS)
    _deterministic(start['seed'], start['clock'])
    _load_script(start.get('replay'))
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
        _send({'t': 'done', 'ok': False, 'error': _failure(exc, 'SYNTAX_ERROR' if syntax else None)})
        return
    # Address space set aside (inside the baseline the memory limit is added to) for reporting a MemoryError.
    # bytes(n) is calloc'd: mapped untouched (a bytearray's 512 page faults were most of a millisecond).
    reserve = [bytes(2 * 1024 * 1024)]
    inputs = {}
    try:
        inputs = _put_files(start.get('files') or [])
        _import_policy(allowed)
        _process_policy(policy, start.get('execFilter'))
        _limits(start.get('limits', {}))
        for block in _earlier_steps(start['code']):
            _run_quiet(block, program)
        program.pop('__cc_value__', None)
        program.pop('__cc_last__', None)
        result = eval(code, program)
        if _CO_COROUTINE & code.co_flags:
            _asyncio().run_until_complete(result)
        value, final = program.get('__cc_value__'), False
        implicit = '__cc_last__' in program
        if implicit:
            value = program.pop('__cc_last__')
        # An awaitable last expression is awaited, as a JavaScript program's returned promise is.
        if hasattr(value, '__await__') and not implicit:
            value = _asyncio().run_until_complete(value)
    except _FinalAnswer as given:
        value, final, implicit = (given.args[0] if given.args else None), True, False
    except SystemExit as exc:
        if not _clean_exit(exc):
            _report_failure(exc, reserve, program, flush, inputs)
            return
        # exit(), sys.exit(0): the program ended as it meant to, with no value.
        value, final, implicit = None, False, False
    except BaseException as exc:
        _report_failure(exc, reserve, program, flush, inputs)
        return
    flush()
    def outcome(v):
        # An agent's step says whether it gave the final answer, as the composed JavaScript does.
        return {'final': final, 'value': v} if start['code'].startswith(_STEPS) else v
    try:
        try:
            payload = _encode(outcome(value), 'result')
            cap = (start.get('limits') or {}).get('resultBytes')
            if implicit and cap and len(payload.encode('utf-8', 'surrogatepass')) > cap:
                raise ValueError('it is larger than the ' + str(cap) + ' bytes a result may have')
        except BaseException as exc:
            if not implicit or isinstance(exc, MemoryError):
                raise
            # The last statement's value, which no expression asked for, that cannot be sent: None, said so.
            _send({'t': 'log', 'level': 'warn', 'message': 'the result is None: the last statement\'s value cannot '
                   + 'be sent (' + _text(exc) + '); end with an expression or final_answer(x) to return a value'})
            payload = _encode(outcome(None), 'result')
    except BaseException as exc:
        try:
            message = 'the result cannot be sent: ' + _text(exc)
            _send({'t': 'done', 'ok': False, 'error': {'code': 'RESULT_INVALID', 'name': _name(exc), 'message': message}})
        except MemoryError:
            _out_of_memory(program)
        return
    _send({'t': 'done', 'ok': True, 'value': payload, 'artifacts': _collect(inputs)})

def _clean_exit(exc):
    try:
        code = exc.code
        return code is None or (type(code) in (int, bool) and code == 0)
    except BaseException:
        return False

def _report_failure(exc, reserve, program, flush, inputs):
    if isinstance(exc, MemoryError):
        # Reporting needs memory: free the reserve and what the program holds (its globals, the locals of its
        # frames; the traceback keeps its line numbers).
        reserve.clear()
        program.clear()
        _clear_frames(exc.__traceback__)
    try:
        flush()
        _send({'t': 'done', 'ok': False, 'error': _failure(exc), 'artifacts': _collect(inputs)})
    except MemoryError:
        _out_of_memory(program)

def _out_of_memory(program):
    # The program's data fills the address space, so even the report could not be made (a 1e6-deep list just
    # under the limit): let the program's globals go, then report with what that freed.
    program.clear()
    _send({'t': 'done', 'ok': False, 'error': {'code': 'MEMORY_LIMIT', 'name': 'MemoryError',
                                                'message': 'the program ran out of memory'}})

_main()
sys.stdout = sys.__stdout__
# The host measures what the sandbox used (its CPU, its peak memory) from /proc before it ends it: stay until
# then (the host's kill, or the pipe's end).
try:
    while os.read(4, 65536):
        pass
finally:
    os._exit(0)
`;
