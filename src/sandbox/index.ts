export { createQuickJsDriver, QuickJsDriver, DEFAULT_WARM_VMS_PER_WORKER } from './quickjs/index.ts';
export type { QuickJsDriverOptions } from './quickjs/index.ts';
export { DEFAULT_LIMITS, resolveLimits } from './limits.ts';
