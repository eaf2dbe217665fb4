export * from './errors/index.ts';
export * from './spec/index.ts';
export * from './codec/index.ts';
export * from './tools/index.ts';
export * from './sandbox/index.ts';
export * from './store/index.ts';
export * from './durable/index.ts';
export * from './http/index.ts';
