// The tools module the chaos servers load (written next to the database as tools.js, importing the built
// package): one tool per effect, each telling the ledger when it starts and what it writes.

/** The tool of each effect, by the name the programs call. */
export const TOOL_OF = { unsafe: 'charge', keyed: 'book', read: 'lookup', idempotent: 'put' } as const;
export type Effect = keyof typeof TOOL_OF;

/** What a call of `op` returns, so the harness knows every task's right result. */
export const resultOf = (op: string, effect: Effect): string => `${op}:${effect}`;

/** The module's source; the ledger's URL comes from CHAOS_LEDGER in the server's environment. */
export const TOOLS_SOURCE = `
import { defineTool } from 'codecall';
const ledger = process.env.CHAOS_LEDGER;
const post = (record) =>
  fetch(ledger, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(record) });
// Waits ms of this process's own time (a SIGSTOPped process does not count the stop), abortable.
// ctx.signal is the run's, shared by its calls: the listener goes when the wait ends.
const pause = (ms, signal) => new Promise((resolve, reject) => {
  if (signal.aborted) return reject(new Error('aborted'));
  const onAbort = () => { clearTimeout(t); reject(new Error('aborted')); };
  const t = setTimeout(() => { signal.removeEventListener('abort', onAbort); resolve(); }, ms);
  signal.addEventListener('abort', onAbort, { once: true });
});
const tool = (name, effect, writes) => defineTool({
  name,
  description: effect + ' call on the chaos ledger',
  effect,
  requiresApproval: (a) => a.approve === true,
  execute: async (a, ctx) => {
    const who = { op: a.op, effect, pid: process.pid, token: ctx.fencingToken ?? null, key: ctx.idempotencyKey ?? null };
    await post({ kind: 'begin', ...who });
    await pause(a.ms / 2, ctx.signal);
    if (writes) await post({ kind: 'write', ...who });
    await pause(a.ms / 2, ctx.signal);
    return a.op + ':' + effect;
  },
});
export default [
  tool('${TOOL_OF.unsafe}', 'unsafe', true),
  tool('${TOOL_OF.keyed}', 'keyed', true),
  tool('${TOOL_OF.read}', 'read', false),
  tool('${TOOL_OF.idempotent}', 'idempotent', true),
];
`;
