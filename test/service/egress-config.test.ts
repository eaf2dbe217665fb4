import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/service/config.ts';
import {
  serviceEgress,
  serviceNetworkDefaults,
  serviceNetworkPolicies,
} from '../../src/service/service-egress.ts';

// The egress settings of `codecall serve` (issue 21): from the environment as JSON, checked at start.

describe('egress config', () => {
  it('reads tenant policies and secrets from the environment, and checks them at start', () => {
    const config = loadConfig({
      env: {
        CODECALL_EGRESS_TENANTS: JSON.stringify({
          acme: { allow: ['*.acme.com'], max_requests: 5 },
          '*': { allow: ['x.org'] },
        }),
        CODECALL_EGRESS_SECRETS: JSON.stringify([{ name: 'gh', hosts: ['api.github.com'], env: 'GH_TOKEN' }]),
        CODECALL_EGRESS_MAX_REQUESTS: '7',
      },
    });
    expect(config.egressMaxRequests).toBe(7);
    expect(serviceNetworkPolicies(config)).toEqual({
      acme: { allow: ['*.acme.com'], maxRequests: 5 },
      '*': { allow: ['x.org'] },
    });
    expect(() => serviceEgress(config, {})).toThrow(/the secret "gh" reads GH_TOKEN, which is not set/);
    expect(typeof serviceEgress(config, { GH_TOKEN: 'v' }).fetch).toBe('function');
    expect(serviceNetworkPolicies(loadConfig({ env: {} }))).toBeUndefined();
  });

  it('refuses a bad policy or secret binding with INVALID_CONFIG naming it', () => {
    const bad = (env: Record<string, string>) => () => serviceNetworkPolicies(loadConfig({ env }));
    expect(bad({ CODECALL_EGRESS_TENANTS: '{"acme":{"allow":["http://x"]}}' })).toThrow(/egressTenants.acme/);
    expect(bad({ CODECALL_EGRESS_TENANTS: '{"acme":false}' })).toThrow(/egressTenants.acme: give the hosts/);
    expect(bad({ CODECALL_EGRESS_TENANTS: 'not json' })).toThrow(/egressTenants/);
    expect(() =>
      loadConfig({ env: { CODECALL_EGRESS_SECRETS: '[{"name":"a b","hosts":["x"],"env":"E"}]' } }),
    ).toThrow(/egressSecrets/);
  });

  it("reads each tenant's default access, and refuses one its policy does not allow", () => {
    const env = {
      CODECALL_EGRESS_TENANTS: JSON.stringify({ acme: { allow: ['*.acme.com'] } }),
      CODECALL_EGRESS_DEFAULTS: JSON.stringify({
        acme: { allow: ['api.acme.com'] },
        '*': { allow: ['x.org'] },
      }),
    };
    const config = loadConfig({ env });
    expect(serviceNetworkDefaults(config, serviceNetworkPolicies(config))).toEqual({
      acme: { allow: ['api.acme.com'] },
      '*': { allow: ['x.org'] },
    });
    expect(serviceNetworkDefaults(loadConfig({ env: {} }), undefined)).toBeUndefined();
    const outside = loadConfig({
      env: { ...env, CODECALL_EGRESS_DEFAULTS: JSON.stringify({ acme: { allow: ['x.org'] } }) },
    });
    expect(() => serviceNetworkDefaults(outside, serviceNetworkPolicies(outside))).toThrow(
      /config egressDefaults.acme.allow: "x.org" is not within \*.acme.com/,
    );
    const bad = loadConfig({ env: { CODECALL_EGRESS_DEFAULTS: '{"acme":{"allow":["http://x"]}}' } });
    expect(() => serviceNetworkDefaults(bad, undefined)).toThrow(/egressDefaults.acme/);
  });
});
