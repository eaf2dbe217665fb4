export { createCodecallMcpServer } from './create-mcp-server.ts';
export type { CodecallMcpServerOptions } from './create-mcp-server.ts';
export { runtimeTaskBackend } from './task-backend.ts';
export type { RuntimeTaskBackendOptions, TaskBackend } from './task-backend.ts';
export { ToolCatalog } from './tool-catalog.ts';
export type { CatalogEntry, CatalogPage, CatalogQuery } from './tool-catalog.ts';
export { artifactUri, journalUri, taskResult } from './task-results.ts';
export { CODE_MODE_TOOLS, TASK_TOOLS } from './server-tools.ts';
