import { CodecallError } from '../errors/index.ts';
import { createEgress } from '../egress/index.ts';
import type { Egress } from '../spec/index.ts';
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
