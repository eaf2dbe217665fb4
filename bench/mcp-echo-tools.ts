// The in-process twin of bench/mcp-upstream.ts's `echo`, for bench/mcp-server.ts: what a call through `execute`
// costs without the MCP hop.
import { defineTool } from 'codecall';

export default [
  defineTool({
    name: 'echo',
    description: 'Answers with its argument at once.',
    input: { type: 'object', properties: { i: { type: 'number' } }, required: ['i'] },
    effect: 'read',
    execute: (a: { i: number }) => ({ ok: true, i: a.i }),
  }),
];
