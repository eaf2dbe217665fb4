export { functionTools, fromStrictArguments, strictSchema } from './tool-specs.ts';
export type { FunctionTool, FunctionToolsOptions } from './tool-specs.ts';
export { parseToolArguments } from './parse-tool-arguments.ts';
export type { ParsedArguments } from './parse-tool-arguments.ts';
export { validateToolArguments } from './validate-tool-arguments.ts';
export type { ArgumentsCheck } from './validate-tool-arguments.ts';
