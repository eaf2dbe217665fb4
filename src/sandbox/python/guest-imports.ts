/**
 * The import policy (allowed_libraries) and the runner's own import hooks. Every import the program makes is
 * checked, whichever way it goes (ADR 0016, addendum issue 15): `builtins.__import__` itself is replaced (so
 * every builtins the program reaches holds the check), an audit hook the program cannot remove sees each module
 * the import machinery loads (importlib, loaders, spec objects), and the importer classes a `__subclasses__()`
 * walk finds check what they create or run. An import is the program's when the nearest frame that is not the
 * import machinery is the program's code; what a library imports for itself stays allowed. The OS sandbox stays
 * the boundary: modules already loaded remain reachable as objects (a function's `__globals__`). Part of
 * GUEST_RUNNER (guest-runner.ts).
 */
export const GUEST_IMPORTS = String.raw`# ---- imports -----------------------------------------------------------------------------------------------
import _frozen_importlib, _frozen_importlib_external
# Set with a policy (opcode is imported only then).
_IMPORT_NAME = -1
_real_import = builtins.__import__

def _codes_of(code, into):
    into.add(code)
    for c in code.co_consts:
        if isinstance(c, type(code)):
            _codes_of(c, into)
    return into

# The runner's own code: its frames are neither the program's nor a library's.
# By identity (id() of objects that live as long as the runner): hashing a code object hashes its contents.
_RUNNER_CODES = frozenset(id(c) for c in _codes_of(sys._getframe().f_code, set()))
_allowed = [None]
# ADR 0041: exact entries; the packages of 'pkg.*' entries (each with a dot after it: what a submodule of it starts
# with); the packages above any entry (loaded for it, importable by the program only as 'from p import <entry>').
_exact, _star_below, _above = [frozenset()], [None], [frozenset()]
# File names the program compiled code under (compile(), CodeType): frames of that code are the program's.
_program_files = set()
_policy_codes = set()
_machinery_files = {}
_MACHINERY_FILES = tuple('/importlib/' + n + '.py' for n in ('__init__', '_bootstrap', '_bootstrap_external', 'util', '_abc', 'machinery'))

def _machinery(code):
    name = code.co_filename
    if id(code) in _policy_codes:
        return True
    known = _machinery_files.get(name)
    if known is None:
        known = _machinery_files[name] = name.startswith('<frozen importlib') or name.endswith(_MACHINERY_FILES)
    return known

def _library_file(name):
    return name.startswith('/') or name.startswith('<frozen')

def _is_program(frame):
    """Whether the nearest frame outside the import machinery is the program's: its own code (<program>, <step>,
    what it exec()s or compiles under any name), not the runner's, not a library's file or frozen module."""
    while frame is not None:
        code = frame.f_code
        if not _machinery(code):
            if id(code) in _RUNNER_CODES:
                return False
            name = code.co_filename
            return name in _program_files or not _library_file(name)
        frame = frame.f_back
    return False

def _allows(name):
    below = _star_below[0]
    if below is None or name == 'codecall':
        # codecall is the sandbox's own module (guest-fetch.ts), whatever the task allows.
        return True
    return name in _exact[0] or (name + '.').startswith(below)

def _loading_for_entry(name, frame):
    """Whether the machinery loads package name on the way to a listed module below it (its parent's load)."""
    if name not in _above[0]:
        return False
    prefix = name + '.'
    while frame is not None and _machinery(frame.f_code):
        child = frame.f_locals.get('name')
        if isinstance(child, str) and child.startswith(prefix) and _allows(child):
            return True
        frame = frame.f_back
    return False

def _allows_load(name, frame):
    return _allows(name) or _loading_for_entry(name, frame)

def _refusal(name):
    listed = ', '.join(sorted(_allowed[0])) or 'none'
    hint = ''
    parent = name.rpartition('.')[0]
    while parent:
        if parent in _exact[0]:
            hint = '; ' + repr(parent + '.*') + ' would allow its submodules'
            break
        parent = parent.rpartition('.')[0]
    return ImportError('import of ' + repr(name) + ' is not allowed for this task (allowed_libraries: ' + listed
                       + hint + ')', name=name)

def _check_import(name, frame):
    if isinstance(name, str) and not _allows_load(name, frame) and _is_program(frame):
        raise _refusal(name)

def _refused_from(name, fromlist):
    """What of 'from name import ...' the policy refuses, or None. Under a listed module a name that is not
    already its attribute would load a submodule, which must be listed too; a package that is only above an entry
    gives the listed submodules and nothing else."""
    module = sys.modules.get(name)
    items = list(fromlist)
    if '*' in items:
        items = [i for i in items if i != '*'] + list(getattr(module, '__all__', ()))
    listed = _allows(name)
    for item in items:
        if not isinstance(item, str):
            continue
        if listed and module is not None and hasattr(module, item):
            continue
        if not _allows(name + '.' + item):
            return name + '.' + item
    return None

def _from_c(frame, fromlist):
    """An import C code makes (PyImport_Import: datetime.strptime loading _strptime) while the frame runs: not an
    import statement, and the empty list C passes as fromlist."""
    return frame.f_code.co_code[frame.f_lasti] != _IMPORT_NAME and type(fromlist) is list and not fromlist

# Whether the task refuses processes: multiprocessing's starts then fail at once (_guard_multiprocessing).
_mp_refused = [False]
# Whether subprocess.Popen asks the process policy yet (_guard_subprocess).
_subprocess_guarded = [False]
# Puts http.client's connections over fetch once it is loaded (guest-fetch.ts); None once done.
_http_client_patch = [None]
# Puts urllib3's connections and requests' HTTPAdapter over fetch once they are loaded (guest-requests.ts); None once
# requests is done.
_libraries_patch = [None]

def _import(name, globals=None, locals=None, fromlist=(), level=0):
    if level == 0 and _allowed[0] is not None and isinstance(name, str):
        caller = sys._getframe(1)
        # The machinery importing for an import already checked (a parent package, a fromlist submodule).
        if (not _machinery(caller.f_code) and _is_program(caller) and not _from_c(caller, fromlist)):
            if not _allows(name) and not (fromlist and name in _above[0]):
                raise _refusal(name)
            if fromlist:
                # The package first, without the names: whether a name is its attribute or a submodule to load.
                _real_import(name, globals, locals, (), 0)
                refused = _refused_from(name, fromlist)
                if refused is not None:
                    raise _refusal(refused)
    top = name.partition('.')[0] if level == 0 else ''
    # The program's asyncio reads the host (libraries keep their own).
    if top == 'asyncio' and _is_program(sys._getframe(1)):
        _asyncio()
    module = _real_import(name, globals, locals, fromlist, level)
    # subprocess asks the process policy, however it came in (asyncio's, reached as an attribute, too).
    # (Not while subprocess itself imports: its Popen is not there yet.)
    if not _subprocess_guarded[0] and hasattr(sys.modules.get('subprocess'), 'Popen') and _check[0] is not None:
        _guard_subprocess()
    if _http_client_patch[0] is not None and 'http.client' in sys.modules:
        _http_client_patch[0]()
    if _libraries_patch[0] is not None and 'urllib3' in sys.modules:
        _libraries_patch[0]()
    if 'multiprocessing' in sys.modules:
        _real_clock_for_multiprocessing()
        _guard_multiprocessing()
    return module

_policy_codes.add(id(_import.__code__))
builtins.__import__ = _import

def _module_name(frame):
    """The module the import machinery is loading, from its own frames (spec, module or fullname)."""
    while frame is not None:
        if _machinery(frame.f_code):
            local = frame.f_locals
            spec, module, fullname = local.get('spec'), local.get('module'), local.get('fullname')
            if isinstance(getattr(spec, 'name', None), str):
                return spec.name
            if isinstance(getattr(module, '__name__', None), str):
                return module.__name__
            if isinstance(fullname, str):
                return fullname
        frame = frame.f_back
    return None

def _asked_by_program(frame):
    """Whether a module the machinery loads is the program's doing through the Python-level machinery
    (importlib, a loader it holds): __import__ decided for itself, and C code (a library's compiled half, with no
    frame of its own) importing while the program's frame runs is the library's."""
    through = False
    while frame is not None:
        code = frame.f_code
        if code is _import.__code__:
            return False
        if not _machinery(code):
            return through and _is_program(frame)
        through = True
        frame = frame.f_back
    return False

def _compiled_by_program(frame):
    """Whether the program itself compiles (or builds) code: not a module the machinery loads meanwhile."""
    while frame is not None:
        code = frame.f_code
        if code is _import.__code__:
            return False
        if not _machinery(code):
            return _is_program(frame)
        frame = frame.f_back
    return False

def _audit(event, args):
    if event == 'import':
        frame = sys._getframe(1)
        if isinstance(args[0], str) and not _allows_load(args[0], frame) and _asked_by_program(frame):
            raise _refusal(args[0])
    elif event == 'exec':
        # Cheap tests first: a module's code, loaded for the program (most loads stop at the __import__ frame).
        if getattr(args[0], 'co_name', None) != '<module>':
            return
        frame = sys._getframe(1)
        if _asked_by_program(frame):
            name = _module_name(frame)
            if isinstance(name, str) and not _allows_load(name, frame):
                raise _refusal(name)
    elif event in ('compile', 'code.__new__'):
        filename = args[1]
        if isinstance(filename, bytes):
            filename = os.fsdecode(filename)
        if isinstance(filename, str) and _library_file(filename) and _compiled_by_program(sys._getframe(1)):
            _program_files.add(filename)

def _guard_importer(cls, method, of):
    """Wraps an importer's create_module/exec_module so that the program calling it directly (a loader found on
    __loader__, __spec__ or by walking __subclasses__()) meets the policy."""
    raw = cls.__dict__.get(method)
    if raw is None:
        return
    kind = type(raw) if isinstance(raw, (staticmethod, classmethod)) else None
    fn = raw.__func__ if kind else raw
    def guarded(*args):
        _check_import(of(args[-1]), sys._getframe(1))
        return fn(*args)
    _policy_codes.add(id(guarded.__code__))
    setattr(cls, method, kind(guarded) if kind else guarded)

def _import_policy(allowed):
    if allowed is None:
        return
    global _IMPORT_NAME
    _IMPORT_NAME = _real_import('opcode').opmap['IMPORT_NAME']
    _allowed[0] = frozenset(str(a) for a in allowed)
    _exact[0] = frozenset(a for a in _allowed[0] if not a.endswith('.*'))
    _star_below[0] = tuple(a[:-1] for a in _allowed[0] if a.endswith('.*'))
    above = set()
    for a in _allowed[0]:
        parts = a.split('.')
        above.update('.'.join(parts[:i]) for i in range(1, len(parts) - (2 if a.endswith('.*') else 1) + 1))
    _above[0] = frozenset(above)
    for code in (_check_import.__code__, _audit.__code__, _is_program.__code__, _module_name.__code__,
                 _asked_by_program.__code__, _compiled_by_program.__code__, _loading_for_entry.__code__,
                 _allows_load.__code__, _refused_from.__code__):
        _policy_codes.add(id(code))
    for cls in (_frozen_importlib.BuiltinImporter, _frozen_importlib.FrozenImporter,
                _frozen_importlib_external.ExtensionFileLoader):
        _guard_importer(cls, 'create_module', lambda spec: getattr(spec, 'name', None))
        _guard_importer(cls, 'exec_module', lambda module: getattr(module, '__name__', None))
    sys.addaudithook(_audit)

`;
