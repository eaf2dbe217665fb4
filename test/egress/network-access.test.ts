import { describe, expect, it } from 'vitest';
import { CodecallError } from '../../src/errors/index.ts';
import { parseNetworkAccess } from '../../src/spec/index.ts';

function refusal(value: unknown, field?: string): CodecallError {
  try {
    parseNetworkAccess(value, field);
  } catch (error) {
    expect(error).toBeInstanceOf(CodecallError);
    return error as CodecallError;
  }
  throw new Error('expected INVALID_ARGUMENT');
}

describe('parseNetworkAccess', () => {
  it('reads false, null and absent as no access', () => {
    expect(parseNetworkAccess(undefined)).toBeNull();
    expect(parseNetworkAccess(false)).toBeNull();
    expect(parseNetworkAccess(null)).toBeNull();
  });

  it('reads the wire form into the camelCase one, normalized', () => {
    expect(
      parseNetworkAccess({
        allow: ['API.example.com', '*.github.com', 'host:8443', 'api.example.com'],
        methods: ['get', 'POST', 'get'],
        max_requests: 20,
        max_bytes: 1000,
        timeout_seconds: 2.5,
        allow_http: true,
      }),
    ).toStrictEqual({
      allow: ['api.example.com', '*.github.com', 'host:8443'],
      methods: ['GET', 'POST'],
      maxRequests: 20,
      maxBytes: 1000,
      timeoutSeconds: 2.5,
      allowHttp: true,
    });
    expect(parseNetworkAccess({ allow: ['a.test'] })).toStrictEqual({ allow: ['a.test'] });
  });

  it('refuses true: an allow list is needed', () => {
    const error = refusal(true);
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.message).toMatch(/allow/);
    expect(error.details.field).toBe('tool_constraints.network_access');
  });

  it.each([
    ['a string', 'api.example.com', /must be false or an object/],
    ['a list', ['api.example.com'], /must be false or an object/],
    ['a number', 1, /must be false or an object/],
    ['no allow', {}, /"allow" list of hosts is needed/],
    ['an unknown key', { allow: ['a.test'], maxBytes: 5 }, /unknown key "maxBytes"/],
    ['an empty allow', { allow: [] }, /allow must be a non-empty list/],
    ['allow not a list', { allow: 'a.test' }, /allow must be a non-empty list/],
    ['a non-string entry', { allow: [1] }, /allow must be a non-empty list of strings/],
    ['a URL entry', { allow: ['https://a.test/x'] }, /no scheme, path or user/],
    ['a bad port', { allow: ['a.test:99999'] }, /not a port/],
    ['too many entries', { allow: Array.from({ length: 101 }, (_, i) => `h${i}.test`) }, /more than 100/],
    ['empty methods', { allow: ['a.test'], methods: [] }, /methods must be a non-empty list/],
    ['a bad method', { allow: ['a.test'], methods: ['GE T'] }, /not an HTTP method/],
    ['CONNECT', { allow: ['a.test'], methods: ['connect'] }, /CONNECT is not allowed/],
    ['TRACE', { allow: ['a.test'], methods: ['TRACE'] }, /TRACE is not allowed/],
    ['max_requests 0', { allow: ['a.test'], max_requests: 0 }, /max_requests must be an integer/],
    ['max_requests 1.5', { allow: ['a.test'], max_requests: 1.5 }, /max_requests must be an integer/],
    ['max_bytes a string', { allow: ['a.test'], max_bytes: '10' }, /max_bytes must be an integer/],
    ['timeout_seconds 0', { allow: ['a.test'], timeout_seconds: 0 }, /timeout_seconds must be/],
    ['timeout_seconds NaN', { allow: ['a.test'], timeout_seconds: NaN }, /timeout_seconds must be/],
    ['timeout_seconds too long', { allow: ['a.test'], timeout_seconds: 90_000 }, /at most 86400/],
    ['allow_http a string', { allow: ['a.test'], allow_http: 'yes' }, /allow_http must be a boolean/],
  ])('refuses %s', (_what, value, message) => {
    const error = refusal(value, 'constraints.net');
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.message).toMatch(message);
    expect(error.message).toMatch(/^constraints\.net: /);
    expect(error.details.field).toBe('constraints.net');
  });

  it('names the entry it refused', () => {
    expect(refusal({ allow: ['ok.test', 'bad/path'] }).details).toStrictEqual({
      field: 'tool_constraints.network_access',
      entry: 'bad/path',
    });
  });
});
