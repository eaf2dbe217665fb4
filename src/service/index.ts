export { loadConfig, loadModelConfig, envName, serviceConfigSchema } from './config.ts';
export type { LoadConfigOptions, ServiceConfig } from './config.ts';
export { startService } from './create-service.ts';
export type { Service, StartServiceOptions } from './create-service.ts';
export { hashApiKey, newApiKey } from '../auth/api-keys.ts';
export { keyAuthenticator } from '../auth/key-authenticator.ts';
// The CLI serves the console from here; it imports nothing from the HTTP layer itself.
export { DEFAULT_CONSOLE_ROOT } from '../http/index.ts';
