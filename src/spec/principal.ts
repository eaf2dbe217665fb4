import type { KeyRole } from './service-store.ts';

/** Who sends a request: their tenant scopes every task they see; `actor` is journaled with what they do. */
export interface Principal {
  readonly tenant: string;
  readonly role: KeyRole;
  readonly keyId: string | null;
  readonly actor: string;
}

/** Resolves the Authorization header; throws UNAUTHORIZED (401) for a missing or unknown key. */
export type Authenticate = (authorization: string | undefined) => Promise<Principal>;
