import { defineTool } from 'codecall';
import { z } from 'zod';

const ORDERS: Record<string, { customer: string; total: number }> = {
  A100: { customer: 'ada@example.com', total: 30 },
  A101: { customer: 'bo@example.com', total: 240 },
  A102: { customer: 'cy@example.com', total: 12 },
};

export default [
  defineTool({
    name: 'get_order',
    description: 'Looks an order up by id.',
    input: z.object({ id: z.string() }),
    effect: 'read',
    execute: ({ id }) => {
      const order = ORDERS[id];
      if (!order) throw Object.assign(new Error(`no order ${id}`), { code: 'UNKNOWN_ORDER' });
      return { id, ...order };
    },
  }),
  defineTool({
    name: 'refund',
    description: 'Refunds an order. Refunds over 100 need a human approval.',
    input: z.object({ id: z.string(), amount: z.number().positive() }),
    // Keyed: the payment provider deduplicates on ctx.idempotencyKey, so a retry after a crash is safe.
    effect: 'keyed',
    requiresApproval: (args) => (args as { amount: number }).amount > 100,
    execute: ({ id, amount }, ctx) => ({ id, amount, refund_id: `rf_${ctx.idempotencyKey ?? id}` }),
  }),
];
