export * from './json-schema.ts';
export * from './tool.ts';
export * from './sandbox.ts';
