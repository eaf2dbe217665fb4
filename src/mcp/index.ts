export { connectMcpServers } from './connect-mcp-servers.ts';
export type { ConnectMcpOptions, McpServerInfo, McpServers } from './connect-mcp-servers.ts';
export {
  checkMcpServers,
  DEFAULT_MCP_TIMEOUT_SECONDS,
  mcpServerSchema,
  mcpServersSchema,
  parseMcpFlag,
} from './mcp-config.ts';
export type { McpServerConfig, McpToolOverride } from './mcp-config.ts';
export { effectFromAnnotations, mcpMemberName, mcpResultValue, memberNames } from './mcp-results.ts';
export type { McpAnnotations } from './mcp-results.ts';
export { mcpSecretNames, resolveMcpSecrets } from './mcp-secrets.ts';
export type { McpEnvironment } from './mcp-secrets.ts';
