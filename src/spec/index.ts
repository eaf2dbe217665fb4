export * from './json-schema.ts';
export * from './tool.ts';
export * from './sandbox.ts';
export * from './task.ts';
export * from './journal.ts';
export * from './task-store.ts';
export * from './service-store.ts';
export * from './model.ts';
