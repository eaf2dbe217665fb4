export { buildServer } from './build-server.ts';
export type { ServerOptions } from './build-server.ts';
