export { DEFAULT_PORT, loadConfig, loadModelConfig, envName, serviceConfigSchema } from './config.ts';
export type { LoadConfigOptions, ServiceConfig } from './config.ts';
export { createService } from './create-service.ts';
export { sandboxWorkerCount } from './config-sandbox.ts';
export type { CreateServiceOptions, ServiceCore } from './create-service.ts';
export { hashApiKey, newApiKey } from '../auth/api-keys.ts';
export { keyAuthenticator } from '../auth/key-authenticator.ts';
