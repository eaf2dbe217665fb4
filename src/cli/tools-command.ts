import { pythonStubs, toolDeclarations } from '../agent/index.ts';
import { CodecallError } from '../errors/index.ts';
import { connectMcpServers } from '../mcp/index.ts';
import type { McpServers } from '../mcp/index.ts';
import type { ToolDefinition } from '../spec/index.ts';
import { loadToolsModule } from '../tools/load-tools-module.ts';
import type { CliIo } from './cli-io.ts';
import { hasMcp, mcpServersOf } from './mcp-options.ts';

export interface ToolsListOptions {
  tools?: string;
  mcp?: string[];
  mcpConfig?: string;
  /** Print what the agent's prompt declares: TypeScript declarations, or Python stubs with `--language python`. */
  declarations?: boolean;
  language?: string;
  json?: boolean;
}

/**
 * `codecall tools list`: the tools a program would have with these flags (a tools module's and MCP servers'), one
 * line each (`tools.gh.search  read  ...`), as JSON, or as the agent's prompt declares them.
 */
export async function toolsList(options: ToolsListOptions, io: CliIo): Promise<number> {
  const language = options.language ?? 'typescript';
  if (!['typescript', 'javascript', 'python'].includes(language)) {
    throw new CodecallError('INVALID_ARGUMENT', '--language must be typescript, javascript or python');
  }
  const tools: ToolDefinition[] = options.tools ? await loadToolsModule(options.tools) : [];
  let mcp: McpServers | null = null;
  try {
    if (hasMcp(options)) {
      mcp = await connectMcpServers({ servers: await mcpServersOf(options) });
      tools.push(...mcp.tools);
    }
    if (options.json) {
      io.stdout(
        `${JSON.stringify({
          tools: tools.map((t) => ({
            name: `${t.namespace}.${t.name}`,
            description: t.description,
            effect: t.effect,
            requires_approval: t.requiresApproval !== false,
            input_schema: t.inputSchema,
            ...(t.outputSchema === undefined ? {} : { output_schema: t.outputSchema }),
          })),
          mcp_servers: (mcp?.servers ?? []).map((s) => ({
            name: s.name,
            transport: s.transport,
            protocol_version: s.protocolVersion ?? null,
            server_name: s.serverName ?? null,
            server_version: s.serverVersion ?? null,
            tools: s.tools.length,
          })),
        })}\n`,
      );
    } else if (options.declarations) {
      io.stdout(`${language === 'python' ? pythonStubs(tools) : toolDeclarations(tools)}\n`);
    } else {
      for (const s of mcp?.servers ?? []) {
        io.stderr(
          `MCP server ${s.name}: ${s.serverName ?? '?'} ${s.serverVersion ?? ''} (${s.transport}, protocol ${s.protocolVersion ?? '?'}), ${s.tools.length} tools\n`,
        );
      }
      const width = Math.max(0, ...tools.map((t) => `${t.namespace}.${t.name}`.length));
      for (const t of tools) {
        const name = `${t.namespace}.${t.name}`.padEnd(width);
        const approval = t.requiresApproval === false ? '' : ' (approval)';
        const summary = t.description.split('\n')[0] ?? '';
        io.stdout(`${name}  ${t.effect.padEnd(10)}${approval}  ${summary}\n`);
      }
      if (tools.length === 0)
        io.stderr('no tools: give --tools MODULE, --mcp NAME=COMMAND or --mcp-config FILE\n');
    }
    return 0;
  } finally {
    await mcp?.close();
  }
}
