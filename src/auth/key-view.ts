import type { ApiKeyRecord } from '../spec/index.ts';

/** An API key as the CLI and the HTTP API show it: never its secret or hash. */
export function keyView(k: ApiKeyRecord): {
  key_id: string;
  tenant: string;
  role: string;
  name: string | null;
  created_at: string;
  revoked_at: string | null;
} {
  return {
    key_id: k.id,
    tenant: k.tenant,
    role: k.role,
    name: k.name,
    created_at: k.createdAt,
    revoked_at: k.revokedAt,
  };
}
