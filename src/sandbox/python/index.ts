export {
  createPythonDriver,
  PythonDriver,
  PYTHON_DEFAULT_LIMITS,
  DEFAULT_WARM_INTERPRETERS,
} from './python-driver.ts';
export type { PythonDriverOptions } from './python-driver.ts';
export { IMAGE_PACKAGES, probePython, pythonEngine } from './probe.ts';
export type { PythonProbe } from './probe.ts';
