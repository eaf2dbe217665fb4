// Tools of bench/tenants.ts: `echo` returns its argument (tenant B sends 1 MiB through it).
import { defineTool } from 'codecall';

export default [
  defineTool({
    name: 'echo',
    description: 'Returns its argument.',
    input: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    effect: 'read',
    execute: (args: { text: string }) => args.text,
  }),
];
