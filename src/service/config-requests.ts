import { z } from 'zod';

/** Fair share of the event loop between tenants' requests (ADR 0039), per server process. */
export const requestsConfigShape = {
  /** Fraction of the event loop one tenant's requests may take while another tenant is active; 1 turns it off. */
  tenantRequestShare: z.number().min(0.01).max(1).default(0.25),
  /** Event-loop time in ms a tenant may take beyond its share in a burst. */
  tenantRequestBurstMs: z.number().int().min(0).max(600_000).default(1_000),
  /** Requests of one tenant held waiting for their share at once; one more is 429 TOO_MANY_REQUESTS. */
  maxHeldRequestsPerTenant: z.number().int().min(0).max(100_000).default(64),
  /** The longest a request is held for its tenant's share; past it, 429 TOO_MANY_REQUESTS with Retry-After. */
  maxRequestWaitMs: z.number().int().min(0).max(600_000).default(5_000),
};
