// Tools of bench/tenants.ts: `echo` returns its argument (tenant B sends 1 MiB through it); `pay` waits for an
// approval (tenant B leaves big requests pending).
import { defineTool } from 'codecall';

export default [
  defineTool({
    name: 'echo',
    description: 'Returns its argument.',
    input: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    effect: 'read',
    execute: (args: { text: string }) => args.text,
  }),
  defineTool({
    name: 'pay',
    description: 'Records a payment once a human approves it.',
    input: { type: 'object', properties: { memo: { type: 'string' } }, required: ['memo'] },
    effect: 'unsafe',
    requiresApproval: true,
    execute: (args: { memo: string }) => args.memo.length,
  }),
];
