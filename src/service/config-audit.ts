import { z } from 'zod';

/** The keyed audit chain (ADR 0030). */
export const auditConfigShape = {
  /**
   * The file holding the audit key, kept outside the database (default null: `<db>.audit-key`, created 0600 when
   * missing). CODECALL_AUDIT_KEY (the key itself) wins over it.
   */
  auditKeyFile: z.string().min(1).nullable().default(null),
};
