import { describe, expect, it } from 'vitest';
import { checkTenantNetwork, narrowAccess, networkPolicyFor } from '../../src/spec/index.ts';
import type { NetworkAccess } from '../../src/spec/index.ts';

// Tenants' network policies (issue 21): a ceiling on what their tasks' network_access may name.

const policy: NetworkAccess = {
  allow: ['*.acme.com', 'api.example.com', '10.0.0.5:8443'],
  methods: ['GET', 'POST'],
  maxRequests: 10,
};
const check = (access: NetworkAccess) => () => checkTenantNetwork(access, policy, 'acme');

describe('tenant network policies', () => {
  it('finds the tenant’s policy, else the default one, else none', () => {
    const policies = { acme: policy, '*': { allow: ['x.org'] } };
    expect(networkPolicyFor(policies, 'acme')).toBe(policy);
    expect(networkPolicyFor(policies, 'other')).toEqual({ allow: ['x.org'] });
    expect(networkPolicyFor({ acme: policy }, 'other')).toBeUndefined();
    expect(networkPolicyFor(undefined, 'acme')).toBeUndefined();
  });

  it('lets a task name what the policy covers', () => {
    expect(
      check({ allow: ['a.acme.com', '*.b.acme.com', 'api.example.com', '10.0.0.5:8443'], methods: ['GET'] }),
    ).not.toThrow();
    expect(check({ allow: ['*.acme.com'], maxRequests: 10 })).not.toThrow();
  });

  it('refuses more, naming the field and what is over', () => {
    const cases: [NetworkAccess, RegExp][] = [
      [{ allow: ['acme.com'] }, /allow: "acme.com" is not within/], // the wildcard covers below it only
      [{ allow: ['evil.com'] }, /allow: "evil.com"/],
      [{ allow: ['api.example.com:8443'] }, /allow: "api.example.com:8443"/], // another port
      [{ allow: ['10.0.0.5'] }, /allow: "10.0.0.5"/],
      [{ allow: ['a.acme.com'], allowHttp: true }, /allow_http: plain http is not allowed/],
      [{ allow: ['a.acme.com'], methods: ['GET', 'PUT'] }, /methods: PUT is not allowed/],
      [{ allow: ['a.acme.com'], methods: ['GET'], maxRequests: 11 }, /max_requests: must be at most 10/],
    ];
    for (const [access, message] of cases) {
      expect(check(access), JSON.stringify(access)).toThrow(message);
    }
  });

  it('narrows a stored task’s access to the policy as it is now', () => {
    expect(
      narrowAccess({ allow: ['a.acme.com', 'evil.com'], maxRequests: 50, allowHttp: true }, policy),
    ).toEqual({
      allow: ['a.acme.com'],
      methods: ['GET', 'POST'],
      maxRequests: 10,
      allowHttp: false,
    });
    expect(narrowAccess({ allow: ['evil.com'] }, policy).allow).toEqual([]);
    const access = { allow: ['anything.org'] };
    expect(narrowAccess(access, undefined)).toBe(access);
  });
});
