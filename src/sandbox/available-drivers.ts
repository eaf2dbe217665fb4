import type { SandboxDriver, SandboxObserver } from '../spec/index.ts';
import { probePython } from './python/probe.ts';
import { createPythonDriver } from './python/python-driver.ts';
import type { PythonDriverOptions } from './python/python-driver.ts';
import { createQuickJsDriver } from './quickjs/index.ts';
import type { QuickJsDriverOptions } from './quickjs/index.ts';

export interface AvailableDrivers {
  readonly drivers: SandboxDriver[];
  /** Drivers that cannot run on this machine, and why (with how to fix it). */
  readonly unavailable: { readonly name: string; readonly reason: string }[];
}

/**
 * The sandbox drivers this machine can run: quickjs always (WebAssembly), python where bubblewrap and the
 * system's CPython work. A driver that cannot run is left out with its reason, never run unsandboxed.
 */
export async function availableDrivers(
  options: {
    quickjs?: QuickJsDriverOptions;
    python?: PythonDriverOptions | false;
    observer?: SandboxObserver;
  } = {},
): Promise<AvailableDrivers> {
  const observer = options.observer ? { observer: options.observer } : {};
  const drivers: SandboxDriver[] = [createQuickJsDriver({ ...observer, ...options.quickjs })];
  const unavailable: { name: string; reason: string }[] = [];
  if (options.python !== false) {
    const python = options.python ?? {};
    const probe = await probePython({
      ...(python.bwrap ? { bwrap: python.bwrap } : {}),
      ...(python.python ? { python: python.python } : {}),
    });
    if (probe.ok) drivers.push(createPythonDriver({ ...python, probe }));
    else unavailable.push({ name: 'python', reason: probe.reason });
  }
  return { drivers, unavailable };
}
