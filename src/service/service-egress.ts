import { CodecallError } from '../errors/index.ts';
import { createEgress } from '../egress/index.ts';
import { checkTenantNetwork, networkPolicyFor, parseNetworkAccess } from '../spec/index.ts';
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
    'egressAllowPrivate' | 'egressMaxBytes' | 'egressTimeoutSeconds' | 'egressSecrets' | 'egressAudit'
  >,
  env: Readonly<Record<string, string | undefined>>,
  log?: (line: string) => void,
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
    // The operator's audit trail (ADR 0043, amended 2026-12-06): what left the box, one line a hop.
    ...(config.egressAudit && log ? { audit: (record) => log(`egress ${JSON.stringify(record)}`) } : {}),
  });
}

/** The tenants' network policies from `egressTenants` (the wire's form each); INVALID_CONFIG naming a bad one. */
export function serviceNetworkPolicies(
  config: Pick<ServiceConfig, 'egressTenants'>,
): TenantNetworkPolicies | undefined {
  return byTenant(config.egressTenants, 'egressTenants');
}

/**
 * The tenants' default network access from `egressDefaults` (the wire's form each), each within its tenant's
 * policy (`policies`); INVALID_CONFIG naming a bad one or one its policy does not allow.
 */
export function serviceNetworkDefaults(
  config: Pick<ServiceConfig, 'egressDefaults'>,
  policies: TenantNetworkPolicies | undefined,
): TenantNetworkPolicies | undefined {
  const defaults = byTenant(config.egressDefaults, 'egressDefaults');
  for (const [tenant, access] of Object.entries(defaults ?? {})) {
    const policy = networkPolicyFor(policies, tenant);
    if (policy === undefined) continue;
    try {
      checkTenantNetwork(access, policy, tenant, `egressDefaults.${tenant}`);
    } catch (e) {
      throw new CodecallError('INVALID_CONFIG', `config ${(e as Error).message}`, {
        details: { field: 'egressDefaults', tenant },
      });
    }
  }
  return defaults;
}

function byTenant(
  entries: Readonly<Record<string, unknown>>,
  key: 'egressTenants' | 'egressDefaults',
): TenantNetworkPolicies | undefined {
  if (Object.keys(entries).length === 0) return undefined;
  const out: Record<string, NetworkAccess> = {};
  for (const [tenant, value] of Object.entries(entries)) {
    let access;
    try {
      access = parseNetworkAccess(value, `${key}.${tenant}`);
    } catch (e) {
      throw new CodecallError('INVALID_CONFIG', `config ${(e as Error).message}`, {
        details: { field: key, tenant },
      });
    }
    if (access === null) {
      throw new CodecallError(
        'INVALID_CONFIG',
        `config ${key}.${tenant}: give the hosts its tasks may reach, as { "allow": [...] }`,
        { details: { field: key, tenant } },
      );
    }
    out[tenant] = access;
  }
  return out;
}
