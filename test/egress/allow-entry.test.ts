import { describe, expect, it } from 'vitest';
import { matchAllowEntry, parseAllowEntry } from '../../src/spec/index.ts';
import type { AllowEntry } from '../../src/spec/index.ts';

function entries(...raw: string[]): AllowEntry[] {
  return raw.map((r) => {
    const entry = parseAllowEntry(r);
    if (typeof entry === 'string') throw new Error(entry);
    return entry;
  });
}

/** The entry `host:port` matches over https (default port 443), or null. */
function https(list: AllowEntry[], host: string, port = 443): string | null {
  return matchAllowEntry(list, host, port, 443)?.text ?? null;
}

describe('allow entries', () => {
  it.each([
    ['api.example.com', 'api.example.com'],
    ['API.Example.COM', 'api.example.com'],
    ['*.github.com', '*.github.com'],
    ['host:8443', 'host:8443'],
    ['*.x.com:8443', '*.x.com:8443'],
    ['10.0.0.5', '10.0.0.5'],
    ['127.0.0.1:8080', '127.0.0.1:8080'],
    ['[::1]', '[::1]'],
    ['[0:0::1]:8443', '[::1]:8443'],
    ['2001:db8::1', '[2001:db8::1]'],
    ['xn--bcher-kva.example', 'xn--bcher-kva.example'],
    ['_acme.example.com', '_acme.example.com'],
  ])('reads %s as %s', (raw, text) => {
    expect(entries(raw)[0]?.text).toBe(text);
  });

  it.each([
    ['', /empty/],
    ['https://api.example.com', /no scheme/],
    ['api.example.com/v1', /no scheme, path/],
    ['user@api.example.com', /no scheme, path or user/],
    ['api .example.com', /not a host/],
    ['api.example.com.', /not a host name/],
    ['-bad.example.com', /not a host name/],
    ['a..b', /not a host name/],
    ['*', /wildcard is only a leading/],
    ['a.*.com', /wildcard is only a leading/],
    ['*.10.0.0.1', /covers names, not addresses/],
    ['host:0', /not a port/],
    ['host:65536', /not a port/],
    ['host:http', /not a port/],
    ['0x7f.1', /usual form/],
    ['1.2.3', /usual form/],
    ['[::1', /IPv6/],
    ['[::1]x', /IPv6/],
    ['[example.com]', /IPv6/],
    ['bücher.example', /not a host name/],
  ])('refuses %j', (raw, message) => {
    const result = parseAllowEntry(raw);
    expect(typeof result).toBe('string');
    expect(result).toMatch(message);
  });

  it('matches a name exactly, on the default port of the scheme unless the entry names one', () => {
    const list = entries('api.example.com', 'other.test:8443');
    expect(https(list, 'api.example.com')).toBe('api.example.com');
    expect(https(list, 'api.example.com', 8443)).toBeNull();
    expect(https(list, 'www.api.example.com')).toBeNull();
    expect(https(list, 'example.com')).toBeNull();
    expect(https(list, 'other.test', 8443)).toBe('other.test:8443');
    expect(https(list, 'other.test')).toBeNull();
    // An entry without a port takes the scheme's: 80 for http.
    expect(matchAllowEntry(list, 'api.example.com', 80, 80)?.text).toBe('api.example.com');
    expect(matchAllowEntry(list, 'api.example.com', 443, 80)).toBeNull();
  });

  it('matches a wildcard on any subdomain depth, never the name itself nor a look-alike', () => {
    const list = entries('*.x.com');
    expect(https(list, 'a.x.com')).toBe('*.x.com');
    expect(https(list, 'a.b.x.com')).toBe('*.x.com');
    expect(https(list, 'x.com')).toBeNull();
    expect(https(list, 'evilx.com')).toBeNull();
    expect(https(list, 'a.x.com.evil.org')).toBeNull();
    expect(https(list, 'a.x.com', 8443)).toBeNull();
  });

  it('matches address literals as URL parsing writes them', () => {
    const list = entries('127.0.0.1:8080', '[::1]:8443');
    expect(https(list, '127.0.0.1', 8080)).toBe('127.0.0.1:8080');
    expect(https(list, '[::1]', 8443)).toBe('[::1]:8443');
    expect(https(list, new URL('https://[0:0:0::1]:8443/').hostname, 8443)).toBe('[::1]:8443');
    expect(https(list, '127.0.0.2', 8080)).toBeNull();
  });

  it('returns the first entry that matches', () => {
    const list = entries('*.example.com', 'api.example.com');
    expect(https(list, 'api.example.com')).toBe('*.example.com');
  });
});
