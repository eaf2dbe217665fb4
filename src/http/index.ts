export { buildServer } from './build-server.ts';
export type { ServerOptions } from './build-server.ts';
export { ANONYMOUS_ADMIN, canSee } from './principal.ts';
export { CONSOLE_NOT_BUILT, DEFAULT_CONSOLE_ROOT, consoleBuilt } from './console-route.ts';
export type { ConsoleOptions } from './console-route.ts';
export { startService } from './serve.ts';
export type { Service, StartServiceOptions } from './serve.ts';
