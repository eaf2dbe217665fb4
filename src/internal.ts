// codecall/internal: every module's exports, for benchmarks, tools and tests that reach below the public API.
// Nothing here is covered by semver; build on src/index.ts (see docs/api-report.md).
export * from './errors/index.ts';
export * from './spec/index.ts';
export * from './api/index.ts';
export * from './codec/index.ts';
export * from './tools/index.ts';
export * from './sandbox/index.ts';
export * from './store/index.ts';
export * from './durable/index.ts';
export * from './egress/index.ts';
export * from './mcp/index.ts';
export * from './mcpserver/index.ts';
export * from './grammar/index.ts';
export * from './model/index.ts';
export * from './http/index.ts';
export * from './metrics/index.ts';
export * from './agent/index.ts';
export * from './toolformer/index.ts';
