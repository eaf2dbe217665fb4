/**
 * What the program can read that would differ on a replay, served from the journaled clock and the seed: set in the
 * C modules themselves (time, os, resource, random, _datetime's types; _uuid is marked missing) before any program or library sees
 * them, so every import path (sys.modules, _datetime, importlib, a library) gets the same functions. Part of
 * GUEST_RUNNER (guest-runner.ts).
 */
export const GUEST_CLOCK = String.raw`# ---- the journaled clock and the seed ----------------------------------------------------------------------
import gc
# The runner's own measures (CPU, the limits) read the real ones.
_real_getrusage, _real_sleep = resource.getrusage, time.sleep
# multiprocessing's waits with a timeout (its own modules only: _real_clock_for_multiprocessing).
_real_monotonic = time.monotonic
_mp_time = []
_MP_CLOCKED = ('multiprocessing.connection', 'multiprocessing.queues', 'multiprocessing.synchronize')

def _real_clock_for_multiprocessing():
    """multiprocessing's waits loop until the real clock passes their deadline: on the journaled clock, which
    does not move while the program waits, connection.wait(timeout=0) never returned (a Pool's worker handler
    spun in it, and the Pool's close hung until the timeout). Its modules get a time module of their own whose
    monotonic is the real one; processes make a program nondeterministic anyway. Done once each is loaded."""
    for name in _MP_CLOCKED:
        module = sys.modules.get(name)
        if getattr(module, 'time', None) is time:
            if not _mp_time:
                shim = type(time)('time')
                shim.__dict__.update(time.__dict__)
                shim.monotonic = _real_monotonic
                _mp_time.append(shim)
            module.time = _mp_time[0]
_clock_origin = [0]
# Replaced by the seeded generator at start: nothing reads it before.
_rng = [random.Random(0)]

def _wall():
    return _clock[0] / 1000

def _wall_ns():
    return int(_clock[0]) * 1_000_000

def _elapsed():
    # What CPU clocks say: the journaled time since the program started (a CPU loop does not move it).
    return max(0, _clock[0] - _clock_origin[0]) / 1000

def _elapsed_ns():
    return int(max(0, _clock[0] - _clock_origin[0])) * 1_000_000

_CPU_CLOCKS = {getattr(time, n) for n in ('CLOCK_PROCESS_CPUTIME_ID', 'CLOCK_THREAD_CPUTIME_ID') if hasattr(time, n)}

def _clock_gettime(clk_id):
    if not isinstance(clk_id, int):
        raise TypeError('an integer is required')
    return _elapsed() if clk_id in _CPU_CLOCKS else _wall()

def _clock_gettime_ns(clk_id):
    if not isinstance(clk_id, int):
        raise TypeError('an integer is required')
    return _elapsed_ns() if clk_id in _CPU_CLOCKS else _wall_ns()

def _with_now(fn, at, default):
    """A time function whose optional time argument (at index at) defaults to the journaled clock."""
    def call(*args):
        if len(args) <= at or args[at] is None:
            args = args[:at] + (default(),)
        return fn(*args)
    call.__name__ = fn.__name__
    return call

def _patch_time():
    real_localtime, real_gmtime = time.localtime, time.gmtime
    real_ctime, real_asctime, real_strftime = time.ctime, time.asctime, time.strftime
    time.time, time.time_ns = _wall, _wall_ns
    time.monotonic = time.perf_counter = _wall
    time.monotonic_ns = time.perf_counter_ns = _wall_ns
    time.process_time = time.thread_time = _elapsed
    time.process_time_ns = time.thread_time_ns = _elapsed_ns
    time.clock_gettime, time.clock_gettime_ns = _clock_gettime, _clock_gettime_ns
    time.localtime = _with_now(real_localtime, 0, _wall)
    time.gmtime = _with_now(real_gmtime, 0, _wall)
    time.ctime = _with_now(real_ctime, 0, _wall)
    now = lambda: real_localtime(_wall())
    time.asctime = _with_now(real_asctime, 0, now)
    time.strftime = _with_now(real_strftime, 1, now)
    def times():
        return os.times_result((_elapsed(), 0.0, 0.0, 0.0, _wall()))
    os.times = times
    def getrusage(who):
        _real_getrusage(who)  # the same errors for a bad argument
        return resource.struct_rusage((_elapsed(), 0.0) + (0,) * 14)
    resource.getrusage = getrusage

def _set_in_type(cls, name, value):
    """Sets a method of a C type (immutable from Python) in the type's own dict, so every way to the type sees it;
    the type cache is cleared after. False when the dict cannot be reached (another interpreter)."""
    for d in gc.get_referents(cls.__dict__):
        if isinstance(d, dict) and name in d:
            d[name] = value
            sys._clear_type_cache()
            return True
    return False

def _patch_datetime():
    """datetime.now/utcnow/today and date.today read the journaled clock for every importer: the program, a
    library (pandas' Timestamp.now looks now up on the type), _datetime and datetime alike."""
    def now(cls, tz=None):
        return cls.fromtimestamp(_wall(), tz)
    def utcnow(cls):
        return cls.utcfromtimestamp(_wall())
    def today(cls):
        return cls.fromtimestamp(_wall())
    ok = _set_in_type(_orig_datetime, 'now', classmethod(now))
    ok = _set_in_type(_orig_datetime, 'utcnow', classmethod(utcnow)) and ok
    ok = _set_in_type(_orig_date, 'today', classmethod(today)) and ok
    if 'today' in _orig_datetime.__dict__:
        ok = _set_in_type(_orig_datetime, 'today', classmethod(today)) and ok
    if not ok or _orig_datetime.now.__func__ is not now:
        raise RuntimeError('cannot put datetime on the journaled clock')

def _patch_random():
    """os.urandom, os.getrandom, random.SystemRandom and every unseeded random.Random() (tempfile's names) come from
    the seeded generator; uuid has no libuuid (uuid1 then uses the clock and the seeded generator)."""
    def urandom(n):
        return _rng[0].randbytes(n)
    def getrandom(size, flags=0):
        return _rng[0].randbytes(size)
    os.urandom = random._urandom = urandom
    if hasattr(os, 'getrandom'):
        os.getrandom = getrandom
    seed = random.Random.seed
    def seeded(self, a=None, version=2):
        return seed(self, _rng[0].getrandbits(64) if a is None else a, version)
    random.Random.seed = seeded
    random.seed = random._inst.seed
    # uuid without libuuid (whose uuid_generate_time reads the real clock): it falls back to the clock and the seed.
    # Marking the C module missing costs nothing at start, unlike loading it to strip it.
    if '_uuid' not in sys.modules:
        sys.modules['_uuid'] = None

# Files of seeded content the sandbox binds over the kernel's (bwrap-args.ts): written before the program starts.
_SEEDED_FILES = (('/dev/urandom', 16384), ('/dev/random', 16384))
_SEEDED_UUID_FILES = ('/proc/sys/kernel/random/uuid', '/proc/sys/kernel/random/boot_id')

def _seed_files():
    for path, size in _SEEDED_FILES:
        try:
            with open(path, 'r+b') as f:
                f.write(_rng[0].randbytes(size))
        except OSError:
            pass
    for path in _SEEDED_UUID_FILES:
        b = bytearray(_rng[0].randbytes(16))
        b[6], b[8] = (b[6] & 0x0F) | 0x40, (b[8] & 0x3F) | 0x80
        h = b.hex()
        try:
            with open(path, 'r+') as f:
                f.write(h[:8] + '-' + h[8:12] + '-' + h[12:16] + '-' + h[16:20] + '-' + h[20:] + '\n')
        except OSError:
            pass

_patch_time()
_patch_random()
_patch_datetime()

# The seeded files as a pooled interpreter filled them ahead for the usual seed (0), with the generator they left.
_seeded_ahead = []

def _seed_ahead(seed=0):
    """Fills the seeded files for seed while the interpreter waits in the pool (a quarter of a millisecond of
    a warm start): nothing else writes them before the program starts."""
    _rng[0] = random.Random(seed ^ 0x5DEECE66D)
    _seed_files()
    # Its state, not the generator: what the pool imports afterwards may draw from it (os.urandom is patched).
    _seeded_ahead.append((seed, _rng[0].getstate()))

def _deterministic(seed, clock, files=True):
    _clock[0] = _clock_origin[0] = clock
    random.seed(seed)
    ahead = _seeded_ahead.pop() if _seeded_ahead else None
    if files and ahead is not None and ahead[0] == seed:
        _rng[0] = random.Random(0)
        _rng[0].setstate(ahead[1])
    else:
        _rng[0] = random.Random(seed ^ 0x5DEECE66D)
        if files:
            _seed_files()
    def sleep(seconds):
        if _thread.get_ident() != _MAIN_THREAD:
            # A thread cannot wait on the host (tools_from_threads in guest-host-calls.ts); its sleep is real.
            return _real_sleep(seconds)
        _call_sync({'t': 'timer', 'ms': _timer_ms(seconds)})
    time.sleep = sleep

`;
