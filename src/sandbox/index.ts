export {
  createQuickJsDriver,
  QuickJsDriver,
  DEFAULT_WARM_VMS_PER_WORKER,
  typeScriptLowering,
} from './quickjs/index.ts';
export type { QuickJsDriverOptions } from './quickjs/index.ts';
export {
  createPythonDriver,
  IMAGE_PACKAGES,
  PythonDriver,
  PYTHON_DEFAULT_LIMITS,
  probePython,
  pythonEngine,
} from './python/index.ts';
export type { PythonDriverOptions, PythonProbe } from './python/index.ts';
export { availableDrivers } from './available-drivers.ts';
export type { AvailableDrivers } from './available-drivers.ts';
