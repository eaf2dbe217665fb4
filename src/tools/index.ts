export { defineTool, DEFAULT_TOOL_NAMESPACE, RESERVED_TOOL_NAMES } from './define-tool.ts';
export type { DefineToolOptions, ToolArgs } from './define-tool.ts';
export { ToolRegistry } from './tool-host.ts';
export type { ToolHostOptions } from './tool-host.ts';
export { SchemaValidator } from './schema-validator.ts';
export { serializeToolError } from './tool-error.ts';
export { runProgram } from './run-program.ts';
export type { RunProgramOptions } from './run-program.ts';
