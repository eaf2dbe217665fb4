import { QuickJsDriver } from './quickjs-driver.ts';
import type { QuickJsDriverOptions } from './quickjs-driver.ts';

export { QuickJsDriver, DEFAULT_WARM_VMS_PER_WORKER } from './quickjs-driver.ts';
export type { QuickJsDriverOptions } from './quickjs-driver.ts';
export { typeScriptLowering } from './lower-typescript.ts';

export function createQuickJsDriver(options: QuickJsDriverOptions = {}): QuickJsDriver {
  return new QuickJsDriver(options);
}
