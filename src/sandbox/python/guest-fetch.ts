/**
 * Network requests from a Python program (issue 21). The sandbox has no network: a request goes to the host as a
 * call of `egress.read` (GET, HEAD, OPTIONS without a body) or `egress.fetch` (the rest), which the host checks
 * against the task's `network_access`, makes and journals, so a replay answers it with the same bytes. The guest's
 * side of those calls, as src/sandbox/quickjs/guest-fetch.ts is the JavaScript guest's:
 *
 * - `codecall`, a module the program imports (a finder on sys.meta_path makes it when first imported):
 *   `fetch(url, *, method, headers, body, redirect) -> Response`, `fetch_async` (for asyncio.gather), `Response`,
 *   `Headers`, `FetchError` (a ToolError and an OSError, raised for the EGRESS_* codes) and `FetchTimeoutError`
 *   (also a TimeoutError, for EGRESS_TIMEOUT); a `timeout=` in seconds goes with the request to the host;
 * - `http.client.HTTPConnection`/`HTTPSConnection` replaced, once the program (or a library) has imported
 *   http.client, by classes that send through the same calls (`redirect: manual`: http.client follows none), so
 *   `urllib.request.urlopen` works unchanged (its HTTPError for a non-2xx, a URLError around the FetchError, its
 *   `timeout=` honoured: past it, a TimeoutError from getresponse(), which urlopen does not wrap, as in CPython).
 *
 * Nothing here runs at a start but the finder's registration: the cold start pays for none of it. Part of
 * GUEST_RUNNER (guest-runner.ts), after GUEST_IMPORTS (whose `_import` installs the http.client classes).
 */
export const GUEST_FETCH = String.raw`# ---- fetch ---------------------------------------------------------------------------------------------------
# The egress bindings of the task (read, fetch): fetch's own calls, no namespace of the program's (_main).
_egress_names = set()
_NO_NETWORK = ('fetch: this task has no network access (ask for it with tool_constraints.network_access: '
               '{"allow": [host names]})')
_SAFE_METHODS = ('GET', 'HEAD', 'OPTIONS')
_REDIRECTS = ('follow', 'manual', 'error')

def _fetch_text(v, what):
    if isinstance(v, str):
        return v
    if isinstance(v, (bytes, bytearray)):
        return bytes(v).decode('latin-1')
    if isinstance(v, int) and not isinstance(v, bool):
        return str(v)
    raise TypeError('fetch: ' + what + ' must be a str, not ' + type(v).__name__)

def _fetch_headers(headers):
    """[[name, value], ...] from a dict (any mapping) or a list of pairs; repeated names stay."""
    if headers is None:
        return []
    items = headers.items() if hasattr(headers, 'items') else headers
    out = []
    for pair in items:
        try:
            name, value = pair
        except (TypeError, ValueError):
            raise TypeError('fetch: headers must be a dict or a list of (name, value) pairs') from None
        out.append([_fetch_text(name, 'a header name'), _fetch_text(value, 'a header value')])
    return out

def _fetch_body(body):
    if body is None:
        return None
    if isinstance(body, str):
        return body.encode('utf-8')
    if isinstance(body, (bytes, bytearray, memoryview)):
        return bytes(body)
    raise TypeError('fetch: body must be bytes or str, not ' + type(body).__name__)

def _fetch_timeout(timeout):
    """Seconds, or None for no timeout of the program's own (the task's and the operator's still hold)."""
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise TypeError('fetch: timeout must be a number of seconds, not ' + type(timeout).__name__)
    if not timeout > 0 or timeout == float('inf'):
        raise ValueError('fetch: timeout must be a number of seconds above 0')
    return timeout

def _egress_message(url, method, headers, body, redirect, timeout=None):
    """The host call for a request: egress.read when it only reads (recovery may run it again), else egress.fetch.
    A FetchError when the task has no network access. The timeout (seconds) only shortens the task's."""
    if not isinstance(url, str):
        raise TypeError('fetch: url must be a str, not ' + type(url).__name__)
    if not isinstance(method, str):
        raise TypeError('fetch: method must be a str, not ' + type(method).__name__)
    if redirect not in _REDIRECTS:
        raise ValueError("fetch: redirect must be 'follow', 'manual' or 'error'")
    timeout = _fetch_timeout(timeout)
    method = method.upper()
    name = 'read' if body is None and method in _SAFE_METHODS else 'fetch'
    if name not in _egress_names:
        raise FetchError(_NO_NETWORK, 'EGRESS_REFUSED', {'reason': 'no_network_access'})
    args = {'url': url, 'method': method, 'headers': headers,
            'body': None if body is None else binascii.b2a_base64(body, newline=False).decode('ascii'),
            'redirect': redirect}
    if timeout is not None:
        args['timeoutSeconds'] = timeout
    return {'t': 'call', 'ns': 'egress', 'name': name, 'args': _encode(args, 'args')}

_BODY_READ = 262144

def _body_range(ref, offset, length):
    """Bytes of a stored body (ADR 0046) from offset: a host call the journal does not keep."""
    value = _call_sync({'t': 'call', 'ns': 'egress', 'name': 'body',
                        'args': _encode({'sha256': ref['sha256'], 'offset': offset, 'length': length}, 'args')})
    data = binascii.a2b_base64(value['bytes'])
    if not data and length > 0:
        raise FetchError('fetch: the stored body ended early', 'EGRESS_FAILED', None)
    return data

class _Body:
    """A response body read in order: inline bytes, or a stored body's ranges, never more than asked for."""
    __slots__ = ('_inline', '_ref', '_pos', 'size')
    def __init__(self, value):
        ref = value.get('storedBody')
        self._ref = ref
        self._inline = None if ref else binascii.a2b_base64(value['body'])
        self.size = ref['size'] if ref else len(self._inline)
        self._pos = 0
    def read(self, n=-1):
        left = self.size - self._pos
        if n is None or n < 0 or n > left:
            n = left
        if n <= 0:
            return b''
        if self._inline is not None:
            data = self._inline[self._pos:self._pos + n]
        else:
            parts = []
            got = 0
            while got < n:
                part = _body_range(self._ref, self._pos + got, min(_BODY_READ, n - got))
                parts.append(part)
                got += len(part)
            data = b''.join(parts)
        self._pos += len(data)
        return data

def _codecall_module():
    """The codecall module, made when the program first imports it."""
    import _collections_abc, codecs
    module = type(sys)('codecall', 'The sandbox\'s own module: fetch() through the host, to the destinations the '
                                   'task\'s tool_constraints.network_access allows.')

    class Headers(_collections_abc.Mapping):
        """A response's headers: names are case-insensitive (lower case, as received); items() keeps every header
        in order (a repeated name, set-cookie, as often as it came); h[name] and get() join a repeated name's
        values with ', ', get_all() lists them."""
        __slots__ = ('_pairs',)
        def __init__(self, pairs=()):
            self._pairs = tuple((str(k).lower(), str(v)) for k, v in pairs)
        def get_all(self, name):
            key = name.lower() if isinstance(name, str) else None
            return [v for k, v in self._pairs if k == key]
        def __getitem__(self, name):
            found = self.get_all(name)
            if not found:
                raise KeyError(name)
            return ', '.join(found)
        def __contains__(self, name):
            return isinstance(name, str) and any(k == name.lower() for k, _ in self._pairs)
        def __iter__(self):
            return iter(dict.fromkeys(k for k, _ in self._pairs))
        def __len__(self):
            return len(set(k for k, _ in self._pairs))
        def items(self):
            return list(self._pairs)
        def __repr__(self):
            return 'Headers(' + repr(list(self._pairs)) + ')'

    class Response:
        """What fetch() returns: status, reason, ok, headers, url (the last hop's), redirected, content (bytes),
        text (decoded by the content-type's charset, UTF-8 without one), json(); read(n) and iter_bytes(size)
        stream the body (a large one is read from the host by ranges, never whole unless asked)."""
        __slots__ = ('status', 'reason', 'headers', 'url', 'redirected', '_body', '_content', 'allowed_by')
        def __init__(self, status, reason, headers, url, redirected, body, allowed_by=None):
            self.status, self.reason, self.headers, self.url = status, reason, headers, url
            self.redirected, self._body, self._content, self.allowed_by = redirected, body, None, allowed_by
        @property
        def content(self):
            if self._content is None:
                self._content = self._body.read()
            return self._content
        def read(self, n=-1):
            """Up to n bytes of the body not read yet (all of it without n); b'' at its end."""
            return self._body.read(n)
        def iter_bytes(self, chunk_size=_BODY_READ):
            while True:
                chunk = self._body.read(chunk_size)
                if not chunk:
                    return
                yield chunk
        @property
        def ok(self):
            return 200 <= self.status <= 299
        @property
        def encoding(self):
            """The content-type's charset, when it names one Python knows."""
            for param in self.headers.get('content-type', '').split(';')[1:]:
                key, _, value = param.partition('=')
                if key.strip().lower() == 'charset':
                    try:
                        return codecs.lookup(value.strip().strip('"\'')).name
                    except LookupError:
                        return None
            return None
        @property
        def text(self):
            return self.content.decode(self.encoding or 'utf-8', 'replace')
        def json(self, **kwargs):
            return _real_import('json').loads(self.content if self.encoding is None else self.text, **kwargs)
        def __repr__(self):
            return '<Response [' + str(self.status) + ']>'

    def response(value):
        return Response(value['status'], value['statusText'], Headers(value['headers']), value['url'],
                        value['redirected'] is True, _Body(value), value.get('allowedBy'))

    def fetch(url, *, method='GET', headers=None, body=None, redirect='follow', timeout=None):
        """Makes a request through the host (the sandbox has no network). Raises FetchError (its code
        EGRESS_REFUSED, EGRESS_LIMIT, EGRESS_TIMEOUT or EGRESS_FAILED) when it is refused or fails, a
        FetchTimeoutError (also a TimeoutError) past timeout seconds (redirects included; at most the task's
        timeout_seconds); an HTTP error status is a Response like any other."""
        msg = _egress_message(url, method, _fetch_headers(headers), _fetch_body(body), redirect, timeout)
        return response(_call_sync(msg))

    async def fetch_async(url, *, method='GET', headers=None, body=None, redirect='follow', timeout=None):
        """fetch() to await: requests gathered (asyncio.gather) are made at once."""
        msg = _egress_message(url, method, _fetch_headers(headers), _fetch_body(body), redirect, timeout)
        return response(await _call_async(msg))

    for c in (Headers, Response):
        c.__module__, c.__qualname__ = 'codecall', c.__name__
    module.__dict__.update(fetch=fetch, fetch_async=fetch_async, Response=Response, Headers=Headers,
                           FetchError=FetchError, FetchTimeoutError=FetchTimeoutError,
                           __all__=['fetch', 'fetch_async', 'Response', 'Headers', 'FetchError', 'FetchTimeoutError'])
    return module

class _CodecallFinder:
    """Finds the codecall module (first on sys.meta_path: no directory is searched for it)."""
    @staticmethod
    def find_spec(name, path=None, target=None):
        return _frozen_importlib.ModuleSpec('codecall', _CodecallFinder) if name == 'codecall' else None
    @staticmethod
    def create_module(spec):
        return _codecall_module()
    @staticmethod
    def exec_module(module):
        pass

sys.meta_path.insert(0, _CodecallFinder)

# ---- http.client (and urllib.request) over fetch -------------------------------------------------------------
# Headers the host writes itself (src/egress/request-headers.ts): http.client and urllib add them, the host would
# refuse them.
_HOST_HEADERS = frozenset(('host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade',
                           'te', 'trailer', 'expect', 'proxy-connection'))

def _http_body(parts):
    """The bytes of what http.client was given: bytes, str (ISO-8859-1, as http.client encodes it), a file, an
    iterable of chunks."""
    out = []
    def add(data):
        if isinstance(data, str):
            out.append(data.encode('iso-8859-1'))
        elif isinstance(data, (bytes, bytearray, memoryview)):
            out.append(bytes(data))
        elif hasattr(data, 'read'):
            add(data.read())
        else:
            try:
                chunks = iter(data)
            except TypeError:
                raise TypeError('message_body should be a bytes-like object or an iterable, got ' + repr(type(data))) from None
            for chunk in chunks:
                add(chunk)
    for part in parts:
        add(part)
    body = b''.join(out)
    return body if body else None

# What _patch_http_client makes of an egress answer: an http.client.HTTPResponse (requests' adapter uses it too).
_http_received = [None]

def _patch_http_client():
    """Replaces http.client's connections with ones over fetch, once http.client is loaded (and not while it
    loads: its own classes are defined then)."""
    client = sys.modules.get('http.client')
    if client is None or getattr(getattr(client, '__spec__', None), '_initializing', False):
        return
    _http_client_patch[0] = None
    if getattr(client.HTTPConnection, '_cc_egress', False):
        return
    import io
    Base = client.HTTPConnection
    _DEFAULT_TIMEOUT = client.socket._GLOBAL_DEFAULT_TIMEOUT

    class _Wire(io.RawIOBase):
        """The status line and headers, then the body as the host has it (a stored one read by ranges)."""
        def __init__(self, head, body):
            self._head, self._body = head, body
        def readable(self):
            return True
        def readinto(self, buffer):
            view = memoryview(buffer)
            if self._head:
                n = min(len(view), len(self._head))
                view[:n] = self._head[:n]
                self._head = self._head[n:]
                return n
            data = self._body.read(min(len(view), _BODY_READ))
            view[:len(data)] = data
            return len(data)

    class _Received:
        """The response as a socket http.client reads: HTTPResponse's own parser makes the response object."""
        def __init__(self, head, body):
            self.head, self.body = head, body
        def makefile(self, *args, **kwargs):
            return io.BufferedReader(_Wire(self.head, self.body), _BODY_READ)
        def close(self):
            pass

    def received(value, method):
        head = ['HTTP/1.1 ' + str(value['status']) + ' ' + str(value['statusText'])]
        body = _Body(value)
        for name, v in value['headers']:
            # The body came whole: its length is the one to read (a HEAD's headers stay as they were).
            if method != 'HEAD' and name in ('content-length', 'transfer-encoding'):
                continue
            head.append(name + ': ' + v)
        if method != 'HEAD':
            head.append('content-length: ' + str(body.size))
        raw = ('\r\n'.join(head) + '\r\n\r\n').encode('latin-1', 'replace')
        response = client.HTTPResponse(_Received(raw, body), method=method)
        response.begin()
        response.url = value['url']
        return response

    class HTTPConnection(Base):
        """http.client.HTTPConnection through codecall.fetch: the sandbox has no network; the host makes each
        request (tool_constraints.network_access). No redirect is followed (urllib follows them itself)."""
        _cc_egress = True
        _cc_scheme = 'http'
        def __init__(self, host, port=None, *args, **kwargs):
            # The timeout (positional third, as http.client's) goes with each request to the host.
            Base.__init__(self, host, port, args[0] if args else kwargs.get('timeout', _DEFAULT_TIMEOUT))
            self._cc_pending = None
            self._cc_response = None
        def set_tunnel(self, host, port=None, headers=None):
            # A proxy's tunnel: the host goes to the destination itself.
            pass
        def connect(self):
            # No socket: the host connects for each request.
            pass
        def close(self):
            self.sock = None
            self._cc_pending = self._cc_response = None
        def _cc_started(self, what):
            if self._cc_pending is None:
                raise client.CannotSendHeader(what + ' before putrequest()')
            return self._cc_pending
        def putrequest(self, method, url, skip_host=False, skip_accept_encoding=False):
            self._validate_method(method)
            self._validate_path(url)
            self._cc_pending = (method, url or '/', [], [])
            self._cc_response = None
        def putheader(self, header, *values):
            headers = self._cc_started('putheader()')[2]
            name = header.decode('latin-1') if isinstance(header, bytes) else str(header)
            headers.append([name, ', '.join(v.decode('latin-1') if isinstance(v, bytes) else str(v) for v in values)])
        def endheaders(self, message_body=None, *, encode_chunked=False):
            if message_body is not None:
                self._cc_started('endheaders()')[3].append(message_body)
        def send(self, data):
            self._cc_started('send()')[3].append(data)
        def request(self, method, url, body=None, headers={}, *, encode_chunked=False):
            self.putrequest(method, url)
            for name, value in headers.items():
                self.putheader(name, value)
            self.endheaders(body)
            # Made here, as http.client connects here: urllib wraps an OSError from request() in a URLError. A
            # timeout is raised by getresponse(), as CPython's is for a server that accepts and does not answer in
            # time: urlopen lets that TimeoutError (socket.timeout) through unwrapped.
            try:
                self._cc_response = self._cc_send()
            except TimeoutError as late:
                self._cc_response = late
        def getresponse(self):
            if self._cc_response is None:
                if self._cc_pending is None:
                    raise client.ResponseNotReady('no request sent')
                self._cc_response = self._cc_send()
            response, self._cc_response = self._cc_response, None
            if isinstance(response, BaseException):
                raise response
            return response
        def _cc_url(self, target):
            if target.startswith(('http://', 'https://')):
                return target
            host = '[' + self.host + ']' if ':' in self.host and not self.host.startswith('[') else self.host
            port = '' if self.port == self.default_port else ':' + str(self.port)
            return self._cc_scheme + '://' + host + port + ('' if target.startswith('/') else '/') + target
        def _cc_send(self):
            method, target, headers, parts = self._cc_pending
            self._cc_pending = None
            method = method.upper()
            sent = [h for h in headers if h[0].lower() not in _HOST_HEADERS]
            timeout = self.timeout
            if timeout is _DEFAULT_TIMEOUT:
                timeout = client.socket.getdefaulttimeout()
            msg = _egress_message(self._cc_url(target), method, sent, _http_body(parts), 'manual', timeout)
            return received(_call_sync(msg), method)

    class HTTPSConnection(HTTPConnection):
        """http.client.HTTPSConnection through codecall.fetch (the host's TLS: key_file, context and the like are
        not used)."""
        default_port = client.HTTPS_PORT
        _cc_scheme = 'https'

    for c in (HTTPConnection, HTTPSConnection):
        c.__module__ = 'http.client'
    client.HTTPConnection, client.HTTPSConnection = HTTPConnection, HTTPSConnection
    _http_received[0] = received

_http_client_patch[0] = _patch_http_client

`;
