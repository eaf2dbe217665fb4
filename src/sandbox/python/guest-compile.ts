/** How the guest compiles the program: out of a fenced block, with the value it ends with kept. Part of GUEST_RUNNER (guest-runner.ts). */
export const GUEST_COMPILE = String.raw`_PYTHON_INFO = ('', 'py', 'python', 'python3')
_BACKTICK = chr(96)

def _fence_of(line):
    """The fence (its character and length) a line opens with a Python info string, or None."""
    t = line.strip()
    n = len(t) - len(t.lstrip(t[:1])) if t[:1] in (_BACKTICK, '~') else 0
    info = t[n:].strip()
    if n < 3 or (t[0] == _BACKTICK and _BACKTICK in info) or info.lower() not in _PYTHON_INFO:
        return None
    return t[0], n

def _closes(line, fence):
    t = line.strip()
    # smolagents' prompts end a block with a fence and <end_code> on one line.
    t = t[:-len('<end_code>')].rstrip() if t.endswith('<end_code>') else t
    return len(t) >= fence[1] and t == fence[0] * len(t)

def _unfence(code):
    """A program that is one fenced markdown block (python, py or no language; its closing fence may be cut
    off): its fence lines become blank lines, so every line keeps its number. Anything else as it is."""
    if _BACKTICK * 3 not in code and '~~~' not in code:
        return code
    lines = code.split('\n')
    full = [i for i, line in enumerate(lines) if line.strip()]
    fence = _fence_of(lines[full[0]]) if len(full) > 1 else None
    if fence is None or any(_closes(lines[i], fence) for i in full[1:-1]):
        return code
    lines[full[0]] = ''
    if _closes(lines[full[-1]], fence):
        lines[full[-1]] = ''
    return '\n'.join(lines)

def _located(node, like):
    for name in ('lineno', 'col_offset', 'end_lineno', 'end_col_offset'):
        setattr(node, name, getattr(like, name, None))
    return node

def _keep(name, like, value):
    return _located(_ast.Assign([_located(_ast.Name(name, _ast.Store()), like)], value), like)

def _keep_last(body):
    """Without a last expression the value is that of the last statement run, as smolagents gives it: an
    assignment's value (x = 3 is 3), the branch taken, a loop's last pass. Kept in __cc_last__: implicit, so a
    value that cannot be sent is None (with a warning), not a failure of a program that did its work."""
    if not body:
        return
    last = body[-1]
    if isinstance(last, _ast.Expr):
        body[-1] = _keep('__cc_last__', last, last.value)
    elif isinstance(last, _ast.Assign):
        last.targets.insert(0, _located(_ast.Name('__cc_last__', _ast.Store()), last))
    elif isinstance(last, (_ast.AugAssign, _ast.AnnAssign)) and isinstance(last.target, _ast.Name) and (
            getattr(last, 'value', None) is not None):
        body.append(_keep('__cc_last__', last, _located(_ast.Name(last.target.id, _ast.Load()), last)))
    elif isinstance(last, _ast.If):
        _keep_last(last.body)
        _keep_last(last.orelse)
    elif isinstance(last, (_ast.For, _ast.AsyncFor, _ast.While)):
        _keep_last(last.orelse if last.orelse else last.body)
    elif isinstance(last, (_ast.With, _ast.AsyncWith)):
        _keep_last(last.body)
    elif isinstance(last, _ast.Try) or type(last).__name__ == 'TryStar':
        _keep_last(last.orelse if last.orelse else last.body)
        for handler in last.handlers:
            _keep_last(handler.body)
    elif type(last).__name__ == 'Match':
        for case in last.cases:
            _keep_last(case.body)

def _compile(code):
    tree = compile(_unfence(code), '<program>', 'exec', flags=_ast.PyCF_ONLY_AST | _ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    last = tree.body[-1] if tree.body else None
    if isinstance(last, _ast.Expr):
        # Notebook style: the last expression statement is the value.
        tree.body[-1] = _keep('__cc_value__', last, last.value)
    else:
        _keep_last(tree.body)
    return compile(tree, '<program>', 'exec', flags=_ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)

`;
