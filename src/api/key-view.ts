import type { ApiKeyRecord } from '../spec/index.ts';

/** An API key as the CLI and the HTTP API show it: never its secret or hash. */
export interface KeyView {
  readonly key_id: string;
  readonly tenant: string;
  readonly role: string;
  readonly name: string | null;
  readonly created_at: string;
  readonly revoked_at: string | null;
}

export function keyView(k: ApiKeyRecord): KeyView {
  return {
    key_id: k.id,
    tenant: k.tenant,
    role: k.role,
    name: k.name,
    created_at: k.createdAt,
    revoked_at: k.revokedAt,
  };
}
