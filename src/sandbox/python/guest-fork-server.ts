/** The fd the host sends a fork server its orders on, and the fd it answers on: the server's alone (ADR 0061). */
export const CONTROL_IN_FD = 11;
export const CONTROL_OUT_FD = 12;

/**
 * A fork server (ADR 0061, amended 2026-12-07): the sandbox's interpreter, with the runner loaded, makes each
 * execution's process itself, with namespaces of its own. Part of GUEST_RUNNER (guest-runner.ts), before GUEST_MAIN.
 *
 * The server is bwrap's pid 1 with CAP_SYS_ADMIN and CAP_NET_ADMIN in the sandbox's user namespace and no seccomp
 * filter; it runs only this code and reads only the host's control fd. Per execution it forks a helper that takes
 * new pid, mount, IPC, network and UTS namespaces, and the helper forks the execution's process: pid 1 of its own
 * pid namespace (as a fresh sandbox's interpreter is), which mounts a new /proc and new tmpfs mounts over /tmp,
 * /dev/shm and /workspace, binds fresh seeded files and the masks, drops every capability, and installs bwrap's
 * filter itself. Nothing an execution can write (files, SysV objects, message queues, loopback counters, pids,
 * inode numbers) is seen by the next, and the server is in no namespace the execution can see.
 */
export const GUEST_FORK_SERVER = String.raw`# ---- fork server --------------------------------------------------------------------------------------------
_CTL_IN, _CTL_OUT = ${CONTROL_IN_FD}, ${CONTROL_OUT_FD}
# clone(2) flags; mount(2) flags
_NEW_NS, _NEW_PID, _NEW_IPC, _NEW_NET, _NEW_UTS = 0x20000, 0x20000000, 0x08000000, 0x40000000, 0x04000000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC, _MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 1, 2, 4, 8, 32, 0x1000, 0x4000, 1 << 18

def _ctl_send(msg):
    os.write(_CTL_OUT, (_dumps(msg) + '\n').encode())

def _libc_calls():
    # The ctypes package here (a millisecond, once per server): mount(2) takes pointers and an unsigned long.
    ct = _real_import('ctypes')
    libc = ct.CDLL(None, use_errno=True)
    libc.mount.argtypes = [ct.c_char_p, ct.c_char_p, ct.c_char_p, ct.c_ulong, ct.c_char_p]
    libc.umount2.argtypes = [ct.c_char_p, ct.c_int]
    libc.unshare.argtypes = [ct.c_int]
    libc.capset.argtypes = [ct.c_void_p, ct.c_void_p]
    return {name: getattr(libc, name) for name in ('unshare', 'mount', 'umount2', 'capset')}, ct

def _sys(ok, what, ct):
    if ok != 0:
        raise OSError(ct.get_errno(), what + ': ' + os.strerror(ct.get_errno()))

def _lo_up():
    # The new network namespace's loopback starts down (bwrap brings the sandbox's up).
    import socket, fcntl, struct
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        fcntl.ioctl(s, 0x8914, struct.pack('16sH14x', b'lo', 0x1 | 0x8 | 0x40))  # SIOCSIFFLAGS: UP, LOOPBACK, RUNNING

def _fresh_sandbox(layout, fns, ct):
    """In the execution's process (pid 1 of new namespaces): the mounts a fresh bwrap sandbox has, none shared."""
    mount, umount2 = fns['mount'], fns['umount2']
    def m(src, dst, fstype, flags, data=None):
        _sys(mount(src, dst.encode(), fstype, flags, data), 'mount ' + repr(src) + ' on ' + dst, ct)
    # Staging tmpfs mounts on /workspace (replaced below): the masks' empty file and the seeded files, reachable
    # afterwards only through their binds. One read-only, one not (the program writes the seeded files).
    m(b'tmpfs', '/workspace', b'tmpfs', _MS_NOSUID | _MS_NODEV, b'size=64k,mode=0700')
    os.mkdir('/workspace/ro')
    os.mkdir('/workspace/rw')
    m(b'tmpfs', '/workspace/rw', b'tmpfs', _MS_NOSUID | _MS_NODEV, b'size=64k')
    open('/workspace/ro/empty', 'wb').close()
    font = layout.get('font')
    if font:
        open('/workspace/ro/font', 'wb').close()
        m(('/tmp/' + font).encode(), '/workspace/ro/font', None, _MS_BIND)
    for i, _ in enumerate(layout['seeded']):
        fd = os.open('/workspace/rw/' + str(i), os.O_CREAT | os.O_WRONLY, 0o600)
        os.close(fd)
    m(None, '/workspace', None, _MS_REMOUNT | _MS_RDONLY | _MS_NOSUID | _MS_NODEV)
    m(b'tmpfs', '/tmp', b'tmpfs', _MS_NOSUID | _MS_NODEV, ('size=' + str(layout['tmp'])).encode())
    if font:
        open('/tmp/' + font, 'wb').close()
        m(b'/workspace/ro/font', '/tmp/' + font, None, _MS_BIND)
        m(None, '/tmp/' + font, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | _MS_NOSUID | _MS_NODEV)
    m(b'tmpfs', '/dev/shm', b'tmpfs', _MS_NOSUID | _MS_NODEV, ('size=' + str(layout['shm'])).encode())
    m(b'proc', '/proc', b'proc', _MS_NOSUID | _MS_NODEV | _MS_NOEXEC)
    # As bwrap's --proc: these stay read-only.
    for sub in ('sys', 'sysrq-trigger', 'irq', 'bus'):
        path = '/proc/' + sub
        if os.path.exists(path):
            m(path.encode(), path, None, _MS_BIND | _MS_REC)
            m(None, path, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | _MS_NOSUID | _MS_NODEV | _MS_NOEXEC)
    for path in layout['masks']:
        if os.path.exists(path):
            m(b'/workspace/ro/empty', path, None, _MS_BIND)
    for i, path in enumerate(layout['seeded']):
        m(('/workspace/rw/' + str(i)).encode(), path, None, _MS_BIND)
    _sys(umount2(b'/workspace/rw', 2), 'detach', ct)  # MNT_DETACH
    _sys(umount2(b'/workspace', 2), 'detach', ct)
    m(b'tmpfs', '/workspace', b'tmpfs', _MS_NOSUID | _MS_NODEV, ('size=' + str(layout['workspace'])).encode())
    os.chdir('/workspace')
    _lo_up()

def _drop_privileges(fns, ct, base_filter):
    prctl = _filter_prep()[2]
    prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG SIGKILL: the helper's death ends it (the filter keeps it set)
    # Dumpable again, as a fresh sandbox's interpreter is (its own /proc/self/environ, /proc/1/mem): the server's
    # flag came with the fork, and the server is in no namespace this process sees.
    prctl(4, 1, 0, 0, 0)
    for cap in range(64):
        prctl(24, cap, 0, 0, 0)  # PR_CAPBSET_DROP (EINVAL past the last one)
    prctl(47, 4, 0, 0, 0)  # PR_CAP_AMBIENT_CLEAR_ALL
    hdr = (ct.c_uint32 * 2)(0x20080522, 0)
    data = (ct.c_uint32 * 6)()
    _sys(fns['capset'](ct.addressof(hdr), ct.addressof(data)), 'capset', ct)
    _install_filter(base_filter)

def _zygote(layout, base_filter, ready_w, fns, ct):
    """The helper: new namespaces, then the execution's process. Returns in that process only."""
    os.close(_CTL_IN)
    _sys(fns['unshare'](_NEW_NS | _NEW_PID | _NEW_IPC | _NEW_NET | _NEW_UTS), 'unshare', ct)
    _sys(fns['mount'](None, b'/', None, _MS_REC | _MS_PRIVATE, None), 'private mounts', ct)
    pid = os.fork()
    if pid == 0:
        _fresh_sandbox(layout, fns, ct)
        _drop_privileges(fns, ct, base_filter)
        os.write(ready_w, b'k')
        # Nothing of the server's reaches the program: its control fds, the ready pipe.
        os.closerange(5, 1 << 16)
        return
    # The server learns the process's pid (in its own pid namespace) with the process's word that it is ready.
    os.write(ready_w, b'p' + str(pid).encode() + b';')
    os.close(ready_w)
    status = os.waitpid(pid, 0)[1]
    code = os.waitstatus_to_exitcode(status)
    _ctl_send({'t': 'exit', 'code': code if code >= 0 else None, 'signal': -code if code < 0 else None})
    os._exit(0)

def _serve(msg):
    """Never returns in the server: returns in each execution's process, which then reads its start message."""
    import _signal
    _signal.signal(_signal.SIGINT, _signal.SIG_IGN)
    fns, ct = _libc_calls()
    _filter_prep()[2](4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0
    base_filter = binascii.a2b_base64(msg['filter'])
    layout = msg['layout']
    for name in ('asyncio', 'subprocess', 'socket', 'fcntl', 'struct'):
        _real_import(name)
    ctl = [b'']
    fence = None
    _in_buf[0], _in_buf[1] = b'', 0
    while True:
        ready_r, ready_w = os.pipe()
        zygote = os.fork()
        if zygote == 0:
            try:
                os.close(ready_r)
                _zygote(layout, base_filter, ready_w, fns, ct)
            except BaseException as exc:
                try:
                    _ctl_send({'t': 'broken', 'message': _text(exc)})
                finally:
                    os._exit(1)
            # The execution's process: its helper is its parent; it waits for its start message.
            _seed_ahead()
            return
        os.close(ready_w)
        said = b''
        while True:
            chunk = os.read(ready_r, 64)
            if not chunk:
                break
            said += chunk
        os.close(ready_r)
        if b'k' not in said or b'p' not in said:
            os._exit(1)
        child = int(said[said.index(b'p') + 1:said.index(b';')])
        _ctl_send({'t': 'ready', 'fence': fence, 'pid': child})
        # The host's order: 'end' once the execution is over (any other end kills the whole sandbox).
        while b'\n' not in ctl[0]:
            chunk = os.read(_CTL_IN, 4096)
            if not chunk:
                os._exit(0)
            ctl[0] += chunk
        line, _, ctl[0] = ctl[0].partition(b'\n')
        order = _loads(line.decode())
        if order.get('t') != 'end':
            os._exit(1)
        # The execution's pid 1 dies with its helper (its death signal), and every process of its pid namespace
        # with it; the helper is reaped only once its child is, so after this nothing of the execution runs.
        for pid in (child, zygote):
            try:
                os.kill(pid, 9)
            except OSError:
                pass
        os.waitpid(zygote, 0)
        _end_all()
        # What the execution left unread or wrote into the host's pipe to it (through /proc/self/fd): dropped.
        os.set_blocking(_IN_FD, False)
        try:
            while os.read(_IN_FD, 262144):
                pass
        except BlockingIOError:
            pass
        os.set_blocking(_IN_FD, True)
        _in_buf[0], _in_buf[1] = b'', 0
        # A line of the server's own after the last byte the execution wrote on each of its pipes: the host drops
        # everything before it (the fence is random; no execution saw it).
        fence = binascii.b2a_hex(os.urandom(16)).decode()
        os.write(3, ('\n{"t":"fence","fence":"' + fence + '"}\n').encode())
        os.write(1, ('\n' + fence + '\n').encode())
        os.write(2, ('\n' + fence + '\n').encode())

def _end_all():
    """Waits for every child of the server's (helpers already killed); kills any other (there should be none)."""
    while True:
        try:
            os.kill(-1, 9)
        except OSError:
            pass
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            return
        select.select([], [], [], 0.001)

`;
