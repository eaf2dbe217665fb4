import type { Command } from 'commander';
import { collect } from './repeatable.ts';

/** `--mcp` and `--mcp-config` (read by mcp-options.ts) on a command that runs programs or lists their tools. */
export function addMcpOptions(command: Command): Command {
  return command
    .option(
      '--mcp <server>',
      'an MCP server whose tools are tools.NAME.*: NAME=COMMAND [ARGS...] (stdio) or NAME=URL (Streamable HTTP); repeatable',
      collect,
      [],
    )
    .option('--mcp-config <file>', 'a JSON file of MCP servers (an array, or { "mcpServers": [...] })');
}
