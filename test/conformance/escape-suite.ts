import { describe } from 'vitest';
import { registerConstructorEscapes } from './escape-constructors.ts';
import { registerPollutionEscapes } from './escape-pollution.ts';
import { registerPythonEscapeCases } from './escape-python.ts';
import { registerPythonImportEscapes } from './escape-python-imports.ts';
import { registerResourceEscapes } from './escape-resources.ts';
import { registerToolEscapes } from './escape-tools.ts';
import { registerValueEscapes } from './escape-values.ts';
import type { SuiteOptions } from './harness.ts';

/**
 * Hostile programs every SandboxDriver must contain: each ends as a clean failed result with a stable code or
 * a harmless value, the host process is untouched (no marker file, no `__escaped`, pristine intrinsics), and
 * the same driver still runs a healthy program afterwards. Each group gets its own driver.
 */
export function describeEscapeSuite(options: SuiteOptions): void {
  describe(`${options.name} driver escape suite (${options.language})`, () => {
    registerConstructorEscapes(options);
    registerValueEscapes(options);
    registerToolEscapes(options);
    registerPollutionEscapes(options);
    registerResourceEscapes(options);
    registerPythonEscapeCases(options);
    registerPythonImportEscapes(options);
  });
}
