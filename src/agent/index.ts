export { functionTools, fromStrictArguments, strictSchema } from './tool-specs.ts';
export type { FunctionTool, FunctionToolsOptions } from './tool-specs.ts';
