// A durable task: refunds three orders in parallel. The large one pauses the task for approval
// (run with --db; approve with `codecall tasks approve TASK_ID APPROVAL_ID --db ... --resume`).
const ids: string[] = ['A100', 'A101', 'A102'];
const orders = await Promise.all(ids.map((id) => tools.get_order({ id })));
const refunds = await Promise.allSettled(orders.map((o) => tools.refund({ id: o.id, amount: o.total })));
return refunds.map((r, i) =>
  r.status === 'fulfilled' ? `${ids[i]}: refunded ${r.value.amount}` : `${ids[i]}: ${r.reason.code}`,
);
