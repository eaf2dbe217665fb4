/**
 * `requests` and `urllib3` through the host (issue 21, ADR 0048): the sandbox has no network, so both would fail at
 * their first socket. Once a library has loaded them (`_import`'s hook, as for http.client in guest-fetch.ts):
 *
 * - `requests.adapters.HTTPAdapter.send` is replaced by one that makes the request as one egress call (the same
 *   `egress.read`/`egress.fetch` as `codecall.fetch`, `redirect: manual`: requests follows redirects itself, each hop
 *   a request of its own, so `r.history`, `allow_redirects=False`, a redirect's cookies and requests' own stripping
 *   of `Authorization` hold as they do outside). The answer is a real `urllib3.response.HTTPResponse` over the
 *   http.client response guest-fetch.ts makes (its `received`), given to the adapter's own `build_response`:
 *   content decoding, cookies, `r.raw`, `iter_content` (a stored body read from the host by ranges) are the
 *   library's. Every HTTPAdapter goes through it: the default ones, one a program mounts, a subclass's `super().send`.
 *   Its `max_retries` (a urllib3 `Retry`) is honoured by urllib3's own rules: each attempt is an egress call of its
 *   own (journaled, counted against max_requests); failures that never reached a server retry as connect errors,
 *   cut ones as read errors (idempotent methods), statuses per `status_forcelist` with `Retry-After` and backoff;
 *   spent, the last error is raised (or requests' RetryError for a status). Refusals and bounds are never retried.
 *   A refusal or failure is a `requests.exceptions.ConnectionError`, a timeout a `requests.exceptions.ReadTimeout`,
 *   each also a `codecall.FetchError` (its code and details; uncaught, the task fails with the code).
 * - `urllib3.connection.HTTPConnection` already derives from http.client's (replaced by then): its `connect()` is made
 *   a no-op (the host connects), `HTTPSConnection` sends as https (and is "verified": the host checks certificates),
 *   and `request_chunked` sends the body whole, so `urllib3.PoolManager().request(...)` works too, with urllib3's
 *   own retries and redirects.
 *
 * Part of GUEST_RUNNER (guest-runner.ts), after GUEST_FETCH.
 */
export const GUEST_REQUESTS = String.raw`# ---- requests and urllib3 over fetch --------------------------------------------------------------------------
_urllib3_patched = [False]

def _initializing(module):
    return getattr(getattr(module, '__spec__', None), '_initializing', False)

def _patch_urllib3(connection):
    """urllib3's connections (subclasses of http.client's, already over fetch) without their sockets."""
    Plain, Tls = connection.HTTPConnection, getattr(connection, 'HTTPSConnection', None)
    if not getattr(Plain, '_cc_egress', False):
        return
    def connect(self):
        # No socket: the host connects for each request.
        pass
    def connect_tls(self):
        # The host's TLS: it checks each destination's certificate and name.
        self.is_verified = True
    def request_chunked(self, method, url, body=None, headers=None):
        # Chunks frame a body on a socket: the host sends it whole.
        Plain.request(self, method, url, body=body, headers=headers)
    Plain.connect, Plain.request_chunked = connect, request_chunked
    if getattr(Tls, '_cc_egress', False):
        Tls.connect, Tls._cc_scheme = connect_tls, 'https'

def _requests_timeout(timeout):
    """The seconds a requests timeout gives the whole exchange (the host has one deadline): a number as it is, a
    (connect, read) pair or a urllib3 Timeout as their sum (its total when it has one); None when a part is None."""
    if timeout is None or isinstance(timeout, (int, float)):
        return timeout
    if isinstance(timeout, tuple):
        try:
            connect, read = timeout
        except ValueError:
            raise ValueError('Invalid timeout ' + repr(timeout) + '. Pass a (connect, read) timeout tuple, or a '
                             'single float to set both timeouts to the same value.') from None
    else:
        total = getattr(timeout, 'total', None)
        if total is not None:
            return total
        connect, read = getattr(timeout, '_connect', None), getattr(timeout, '_read', None)
    parts = (connect, read)
    if not all(isinstance(p, (int, float)) and not isinstance(p, bool) for p in parts):
        return None
    return connect + read

def _retry_after_error(retries, error, method, request, failed):
    """The Retry (a mounted HTTPAdapter's max_retries, urllib3's rules) after a failed attempt, slept through; raises
    the attempt's error once retries are spent. A refusal or a bound (EGRESS_REFUSED, EGRESS_LIMIT) is the host's
    answer, never retried; a request that never reached a server (DNS, refused, unreachable, TLS) is retried as a
    connect error (any method); one cut after it went out (a reset, a timeout) as a read error (idempotent methods
    only, as urllib3 does)."""
    errors = sys.modules['urllib3.exceptions']
    if retries is None or error.code not in ('EGRESS_FAILED', 'EGRESS_TIMEOUT'):
        raise failed(error, request) from error
    cause = (error.details or {}).get('cause') if isinstance(error.details, dict) else None
    text = str(error.code) + ': ' + str(error.message)
    if error.code == 'EGRESS_FAILED' and cause in ('dns', 'connection_refused', 'unreachable', 'tls'):
        as_urllib3 = errors.ConnectTimeoutError(text)
    elif error.code == 'EGRESS_TIMEOUT':
        as_urllib3 = errors.ReadTimeoutError(None, request.url, text)
    else:
        as_urllib3 = errors.ProtocolError(text)
    try:
        retries = retries.increment(method, request.url, error=as_urllib3)
    except errors.MaxRetryError:
        raise failed(error, request) from error
    except Exception:
        # Not retried by its rules (a read error of a POST, read=False): the attempt's own error.
        raise failed(error, request) from error
    retries.sleep()
    return retries

def _retry_status(retries, method, raw):
    """Whether the Retry asks for another attempt after this response (status_forcelist, Retry-After)."""
    if retries is None or not hasattr(retries, 'is_retry'):
        return False
    has_retry_after = bool(raw.headers.get('Retry-After'))
    return retries.is_retry(method, raw.status, has_retry_after)

def _patch_requests(adapters):
    """HTTPAdapter.send over fetch (the adapters module and what it imported are loaded)."""
    HTTPAdapter = adapters.HTTPAdapter
    if getattr(HTTPAdapter.send, '_cc_egress', False):
        return
    exceptions = sys.modules['requests.exceptions']
    Urllib3Response = sys.modules['urllib3.response'].HTTPResponse
    urllib3_exceptions = sys.modules['urllib3.exceptions']

    class ConnectionError(exceptions.ConnectionError, FetchError):
        """A request the host refused (EGRESS_REFUSED: not allowed, a method, no network access...), could not make
        (EGRESS_FAILED) or cut (EGRESS_LIMIT): requests' ConnectionError and a codecall.FetchError."""

    class ReadTimeout(exceptions.ReadTimeout, FetchTimeoutError):
        """A request past its timeout (EGRESS_TIMEOUT): requests' ReadTimeout (a Timeout) and a
        codecall.FetchTimeoutError (the host's one deadline does not tell connecting from reading)."""

    for c in (ConnectionError, ReadTimeout):
        c.__module__, c.__qualname__ = 'requests.exceptions', c.__name__
        # str() is 'CODE: message' (what a program prints); message alone is the FetchError's (and the report's).
        c._cc_code_in_message = True

    def failed(error, request):
        cls = ReadTimeout if isinstance(error, FetchTimeoutError) else ConnectionError
        out = cls(str(error.code) + ': ' + str(error.message), error.code, error.details, request=request)
        out.message = error.message
        return out

    def send(self, request, stream=False, timeout=None, verify=True, cert=None, proxies=None):
        """Sends the PreparedRequest through the host (the sandbox has no network; the task's network_access decides
        where it may go) and returns a Response. No redirect is followed here (requests follows them); TLS,
        certificates (verify, cert) and proxies are the host's."""
        method = request.method.decode('latin-1') if isinstance(request.method, bytes) else str(request.method)
        method = method.upper()
        headers = [h for h in _fetch_headers(request.headers) if h[0].lower() not in _HOST_HEADERS]
        body = None if request.body is None else _http_body([request.body])
        retries = self.max_retries
        while True:
            # Each attempt is an egress call of its own: journaled, counted against max_requests.
            try:
                msg = _egress_message(request.url, method, headers, body, 'manual', _requests_timeout(timeout))
                value = _call_sync(msg)
            except FetchError as e:
                retries = _retry_after_error(retries, e, method, request, failed)
                continue
            raw = Urllib3Response.from_httplib(_http_received[0](value, method), preload_content=False,
                                               decode_content=False, request_method=method,
                                               request_url=request.url)
            if not _retry_status(retries, method, raw):
                return self.build_response(request, raw)
            try:
                retries = retries.increment(method, request.url, response=raw)
            except urllib3_exceptions.MaxRetryError as e:
                if retries.raise_on_status:
                    raise exceptions.RetryError(e, request=request) from None
                return self.build_response(request, raw)
            retries.sleep(raw)

    send._cc_egress = True
    HTTPAdapter.send = send

def _patch_libraries():
    """urllib3 once its connections are loaded, requests once its adapters are."""
    connection = sys.modules.get('urllib3.connection')
    if connection is not None and not _urllib3_patched[0] and not _initializing(connection):
        _urllib3_patched[0] = True
        _patch_urllib3(connection)
    adapters = sys.modules.get('requests.adapters')
    if adapters is not None and not _initializing(adapters):
        _libraries_patch[0] = None
        _patch_requests(adapters)

_libraries_patch[0] = _patch_libraries

`;
