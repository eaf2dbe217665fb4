import { CodecallError } from '../errors/index.ts';
import { createEgress } from '../egress/index.ts';
import { parseNetworkAccess } from '../spec/index.ts';
import type { Egress, NetworkAccess, TenantNetworkPolicies } from '../spec/index.ts';
import type { ServiceConfig } from './config.ts';

/**
 * The service's egress from its config: the ceilings, private destinations only where the operator allows them,
 * and each secret's value read from the environment variable it names (INVALID_CONFIG at start when one is unset:
 * a request would otherwise go out without its credential).
 */
export function serviceEgress(
  config: Pick<
    ServiceConfig,
    'egressAllowPrivate' | 'egressMaxBytes' | 'egressTimeoutSeconds' | 'egressSecrets'
  >,
  env: Readonly<Record<string, string | undefined>>,
): Egress {
  const secrets = config.egressSecrets.map(({ name, hosts, env: variable }) => {
    const value = env[variable];
    if (value === undefined || value === '') {
      throw new CodecallError(
        'INVALID_CONFIG',
        `config egressSecrets: the secret "${name}" reads ${variable}, which is not set`,
        { details: { field: 'egressSecrets', secret: name, env: variable } },
      );
    }
    return { name, hosts, value };
  });
  return createEgress({
    allowPrivate: config.egressAllowPrivate,
    secrets,
    limits: { maxBytes: config.egressMaxBytes, timeoutSeconds: config.egressTimeoutSeconds },
  });
}

/** The tenants' network policies from `egressTenants` (the wire's form each); INVALID_CONFIG naming a bad one. */
export function serviceNetworkPolicies(
  config: Pick<ServiceConfig, 'egressTenants'>,
): TenantNetworkPolicies | undefined {
  const entries = Object.entries(config.egressTenants);
  if (entries.length === 0) return undefined;
  const policies: Record<string, NetworkAccess> = {};
  for (const [tenant, value] of entries) {
    let policy;
    try {
      policy = parseNetworkAccess(value, `egressTenants.${tenant}`);
    } catch (e) {
      throw new CodecallError('INVALID_CONFIG', `config ${(e as Error).message}`, {
        details: { field: 'egressTenants', tenant },
      });
    }
    if (policy === null) {
      throw new CodecallError(
        'INVALID_CONFIG',
        `config egressTenants.${tenant}: give the hosts its tasks may reach, as { "allow": [...] }`,
        { details: { field: 'egressTenants', tenant } },
      );
    }
    policies[tenant] = policy;
  }
  return policies;
}
