import { z } from 'zod';
import { mcpServersSchema } from '../mcp/index.ts';

/** MCP servers whose tools programs call as `tools.<name>.<tool>` (issue 22, ADR 0047). */
export const mcpConfigShape = {
  /**
   * `[{ "name": "github", "command": "npx", "args": ["-y", "some-mcp-server"], "env": { ... } }, { "name": "docs",
   * "url": "https://mcp.example.com/mcp", "headers": { ... } }]` (the environment gives it as that JSON); each may
   * override its tools' effects and approvals: `"tools": { "create-issue": { "effect": "keyed",
   * "requiresApproval": true } }`.
   */
  mcpServers: z.preprocess((v) => (typeof v === 'string' ? parseJson(v) : v), mcpServersSchema).default([]),
};

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
