import { describe, expect, it } from 'vitest';
import { CodecallError } from '../../src/errors/index.ts';
import {
  checkWebhookUrl,
  refusedAddressReason,
  resolveWebhookTarget,
} from '../../src/service/webhooks/index.ts';

async function refusal(run: () => unknown): Promise<CodecallError> {
  try {
    await run();
  } catch (error) {
    expect(error).toBeInstanceOf(CodecallError);
    return error as CodecallError;
  }
  throw new Error('expected WEBHOOK_TARGET_REFUSED');
}

const REFUSED: readonly [string, string][] = [
  ['0.0.0.0', 'unspecified'],
  ['10.1.2.3', 'private'],
  ['100.64.0.1', 'carrier-grade NAT'],
  ['100.127.255.255', 'carrier-grade NAT'],
  ['127.0.0.1', 'loopback'],
  ['127.255.0.9', 'loopback'],
  ['169.254.169.254', 'link-local'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['192.168.1.1', 'private'],
  ['224.0.0.251', 'multicast'],
  ['255.255.255.255', 'reserved'],
  ['::', 'unspecified'],
  ['::1', 'loopback'],
  ['fc00::1', 'unique local'],
  ['fd12:3456::1', 'unique local'],
  ['fe80::1', 'link-local'],
  ['febf::1', 'link-local'],
  ['ff02::1', 'multicast'],
  ['::ffff:127.0.0.1', 'loopback'],
  ['::ffff:7f00:1', 'loopback'],
  ['::ffff:10.0.0.1', 'private'],
  ['::ffff:169.254.169.254', 'link-local'],
  ['64:ff9b::192.168.0.1', 'private'],
  ['2002:c0a8:0101::1', 'private'],
  // Every IANA special-purpose block (IPv4 and IPv6 registries), first and last address where it matters.
  ['0.255.255.255', 'unspecified'],
  ['192.0.0.8', 'reserved'],
  ['192.0.2.1', 'documentation'],
  ['192.0.2.255', 'documentation'],
  ['192.31.196.1', 'reserved'],
  ['192.52.193.1', 'reserved'],
  ['192.88.99.1', 'reserved'],
  ['192.175.48.1', 'reserved'],
  ['198.18.0.1', 'reserved'],
  ['198.19.255.255', 'reserved'],
  ['198.51.100.7', 'documentation'],
  ['203.0.113.9', 'documentation'],
  ['239.255.255.255', 'multicast'],
  ['240.0.0.1', 'reserved'],
  ['::ffff:0.0.0.0', 'unspecified'],
  ['::ffff:192.168.0.1', 'private'],
  ['::ffff:100.64.0.1', 'carrier-grade NAT'],
  ['::ffff:203.0.113.1', 'documentation'],
  ['::ffff:ffff:ffff', 'reserved'],
  ['::ffff:0:127.0.0.1', 'loopback'], // IPv4-translated (SIIT)
  ['::ffff:0:a9fe:a9fe', 'link-local'],
  ['::ffff:0:8.8.8.8', 'reserved'],
  ['100:0:0:1::1', 'reserved'], // dummy prefix (RFC 9780)
  ['64:ff9b::127.0.0.1', 'loopback'],
  ['64:ff9b::a9fe:a9fe', 'link-local'],
  ['64:ff9b:1::8.8.8.8', 'reserved'],
  ['64:ff9b:1:ffff::1', 'reserved'],
  ['::127.0.0.1', 'reserved'],
  ['100::1', 'reserved'],
  ['100::ffff:ffff:ffff:ffff', 'reserved'],
  ['2001::1', 'reserved'], // Teredo
  ['2001:2::1', 'reserved'], // benchmarking
  ['2001:1ff:ffff::1', 'reserved'],
  ['2001:db8::1', 'documentation'],
  ['2001:db8:ffff::1', 'documentation'],
  ['3fff::1', 'documentation'],
  ['5f00::1', 'reserved'],
  ['2002:7f00:0001::1', 'loopback'],
  ['2002:0a00::1', 'private'],
  ['fdff:ffff::1', 'unique local'],
  ['fec0::1', 'site-local'],
  ['ff0e::1', 'multicast'],
];

const ALLOWED = [
  '1.1.1.1',
  '8.8.8.8',
  '100.63.255.255',
  '100.128.0.0',
  '172.15.255.255',
  '172.32.0.0',
  '93.184.216.34',
  '2606:4700:4700::1111',
  '2001:4860:4860::8888',
  '::ffff:8.8.8.8',
  '64:ff9b::8.8.8.8',
  '2002:0808:0808::1', // 6to4 of a public v4
  '2001:200::1',
  '2001:db9::1',
  '192.0.3.1',
  '198.20.0.1',
  '203.0.114.1',
  'fbff::1',
  '2a00::1',
];

describe('webhook targets', () => {
  it.each(REFUSED)('refuses the address %s (%s)', (ip, reason) => {
    expect(refusedAddressReason(ip)).toBe(reason);
  });

  it.each(ALLOWED)('accepts the public address %s', (ip) => {
    expect(refusedAddressReason(ip)).toBeNull();
  });

  it.each([
    'http://127.0.0.1/hook',
    'http://[::1]:8080/hook',
    'http://[::ffff:127.0.0.1]/hook',
    'http://[::ffff:0:127.0.0.1]/hook',
    'http://2130706433/hook', // 127.0.0.1 as one number: URL parsing normalizes it
    'http://0x7f.1/hook',
    'https://10.0.0.5/hook',
    'http://169.254.169.254/latest/meta-data',
    'http://localhost:3000/hook',
    'http://LOCALHOST./hook',
    'http://api.localhost/hook',
  ])('refuses %s at submission', async (url) => {
    const error = await refusal(() => checkWebhookUrl(url));
    expect(error.code).toBe('WEBHOOK_TARGET_REFUSED');
    expect(error.details.field).toBe('callback_url');
    expect(() => checkWebhookUrl(url, { allowPrivate: true })).not.toThrow();
  });

  it.each([
    ['ftp://example.com/hook', /http and https/],
    ['file:///etc/passwd', /http and https/],
    ['https://user:pass@example.com/hook', /credentials/],
    ['https://token@example.com/hook', /credentials/],
    ['not a url', /not a valid URL/],
    [`https://example.com/${'a'.repeat(2100)}`, /longer than/],
  ])('refuses %s at submission even with allowPrivate', async (url, message) => {
    const error = await refusal(() => checkWebhookUrl(url, { allowPrivate: true }));
    expect(error.code).toBe('WEBHOOK_TARGET_REFUSED');
    expect(error.details.field).toBe('callback_url');
    expect(error.message).toMatch(message);
  });

  it('accepts a public URL at submission without resolving it', () => {
    expect(checkWebhookUrl('https://hooks.example.com/codecall?x=1').href).toBe(
      'https://hooks.example.com/codecall?x=1',
    );
  });

  it('refuses at delivery a name that resolves to loopback (localhost, via the system resolver)', async () => {
    // `localhost` itself is refused by name; a name that only resolves to 127.0.0.1 is caught by resolving it.
    const viaDns = await refusal(() =>
      resolveWebhookTarget('http://hooks.test/x', {
        lookup: () => Promise.resolve([{ address: '127.0.0.1', family: 4 }]),
      }),
    );
    expect(viaDns.code).toBe('WEBHOOK_TARGET_REFUSED');
    expect(viaDns.message).toMatch(/resolves to 127\.0\.0\.1, a loopback address/);
    const system = await resolveWebhookTarget('http://localhost:9/x', { allowPrivate: true });
    expect(system.addresses.length).toBeGreaterThan(0);
    for (const { address } of system.addresses) expect(refusedAddressReason(address)).toBe('loopback');
  });

  it('refuses a name when any of its addresses is private', async () => {
    const lookup = (): Promise<{ address: string; family: number }[]> =>
      Promise.resolve([
        { address: '93.184.216.34', family: 4 },
        { address: 'fd00::1', family: 6 },
      ]);
    const error = await refusal(() => resolveWebhookTarget('https://mixed.test/x', { lookup }));
    expect(error.message).toMatch(/fd00::1, a unique local address/);
    const allowed = await resolveWebhookTarget('https://mixed.test/x', { lookup, allowPrivate: true });
    expect(allowed.addresses).toHaveLength(2);
  });

  it('pins a public literal without resolving', async () => {
    const target = await resolveWebhookTarget('https://[2606:4700:4700::1111]/x');
    expect(target.host).toBe('2606:4700:4700::1111');
    expect(target.addresses).toEqual([{ address: '2606:4700:4700::1111', family: 6 }]);
  });
});
