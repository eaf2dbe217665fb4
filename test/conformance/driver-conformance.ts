import { describe } from 'vitest';
import { registerConcurrencyCases } from './conformance-concurrency.ts';
import { registerConsoleCases } from './conformance-console.ts';
import { registerDeterminismCases } from './conformance-determinism.ts';
import { registerHostAuthorityCases } from './conformance-host-authority.ts';
import { registerDeterminismSourceCases } from './conformance-determinism-sources.ts';
import { registerHostWorkCases } from './conformance-host-work.ts';
import { registerInterruptionCases } from './conformance-interruption.ts';
import { registerIsolationCases } from './conformance-isolation.ts';
import { registerLeakCases } from './conformance-leaks.ts';
import { registerLimitCases } from './conformance-limits.ts';
import { registerLongTimerCases } from './conformance-long-timers.ts';
import { registerOutputBoundCases } from './conformance-output-bounds.ts';
import { registerPoolCases } from './conformance-pool.ts';
import { registerReplayCases } from './conformance-replay.ts';
import { registerResultCases } from './conformance-results.ts';
import { registerThreadCases } from './conformance-threads.ts';
import { registerToolCases } from './conformance-tools.ts';
import type { SuiteOptions } from './harness.ts';

export type { SuiteOptions, SuiteLanguage } from './harness.ts';

/**
 * The behaviour every SandboxDriver must show, for one guest language. Each group gets its own driver.
 * Cases carry one program per language; a case without a program for `language` is skipped, loudly.
 */
export function describeDriverConformance(options: SuiteOptions): void {
  describe(`${options.name} driver conformance (${options.language})`, () => {
    registerResultCases(options);
    registerToolCases(options);
    registerConsoleCases(options);
    registerLimitCases(options);
    registerLeakCases(options);
    registerLongTimerCases(options);
    registerHostWorkCases(options);
    registerOutputBoundCases(options);
    registerDeterminismCases(options);
    registerDeterminismSourceCases(options);
    registerConcurrencyCases(options);
    registerThreadCases(options);
    registerInterruptionCases(options);
    registerIsolationCases(options);
    registerPoolCases(options);
    registerReplayCases(options);
    registerHostAuthorityCases(options);
  });
}
