import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isErrorCode } from '../../src/errors/index.ts';
import type {
  ExecutionLimits,
  ExecutionResult,
  GuestLanguage,
  LogEntry,
  SandboxDriver,
  SandboxPolicy,
  SerializedError,
  ToolDefinition,
} from '../../src/spec/index.ts';
import { runProgram } from '../../src/tools/index.ts';

/** The guest language a suite is run for; TypeScript cases live under `javascript`. */
export type SuiteLanguage = 'javascript' | 'python';

export interface SuiteOptions {
  name: string;
  createDriver: () => SandboxDriver | Promise<SandboxDriver>;
  language: SuiteLanguage;
}

/** A program text, or a text with an explicit language (e.g. `typescript` inside the javascript suite). */
export type Program = string | { code: string; language: GuestLanguage };
export type PerLanguage<T> = Partial<Record<SuiteLanguage, T>>;

export interface Source {
  readonly code: string;
  readonly language: GuestLanguage;
}

export interface RunOptions {
  tools?: readonly ToolDefinition[];
  limits?: Partial<ExecutionLimits>;
  policy?: SandboxPolicy;
  seed?: number;
  clock?: () => number;
  signal?: AbortSignal;
  onLog?: (entry: LogEntry) => void;
}

/** Returns 2: run after a breach to show the pool is healthy. A new language adds its version here. */
export const HEALTH: PerLanguage<string> = { javascript: 'return 1 + 1', python: '1 + 1' };
/** Awaits the `sleep` tool (see fixtures) for 100 ms and returns 'ok': runs next to a breaching program. */
export const NEIGHBOUR: PerLanguage<string> = {
  javascript: "await tools.sleep({ ms: 100 }); return 'ok';",
  python: "tools.sleep(ms=100)\n'ok'",
};
export const SUITE_LANGUAGES: readonly SuiteLanguage[] = ['javascript', 'python'];

/** Executions started at once in beforeAll, so that every worker of a small pool is up before timing. */
const WARM_UP_RUNS = 4;

/** Budget applied unless a case sets its own, so that a broken driver fails a case instead of hanging it. */
export const DEFAULT_TEST_LIMITS: Partial<ExecutionLimits> = { timeoutMs: 10_000 };

export interface Group {
  readonly options: SuiteOptions;
  readonly language: SuiteLanguage;
  driver(): SandboxDriver;
  run(source: Source, options?: RunOptions): Promise<ExecutionResult>;
  /** A case with one program per language. */
  program(
    name: string,
    programs: PerLanguage<Program>,
    body: (src: Source) => Promise<void>,
    timeoutMs?: number,
  ): void;
  /** A case with several named programs per language. */
  programs<K extends string>(
    name: string,
    programs: PerLanguage<Record<K, Program>>,
    body: (src: Record<K, Source>) => Promise<void>,
    timeoutMs?: number,
  ): void;
  /** A case that runs no guest program of its own. */
  test(name: string, body: () => Promise<void>, timeoutMs?: number): void;
  /** Runs the language's HEALTH program (when it has one) and asserts it returns 2. */
  expectHealthy(): Promise<void>;
}

/** A capability a group's cases need; a driver without it has the whole group skipped, with the reason printed. */
export interface GroupRequirement {
  readonly capable: (driver: SandboxDriver) => boolean;
  /** Printed and attached to each skipped case, e.g. "the driver does not serve replay scripts". */
  readonly reason: string;
}

/**
 * Registers one `describe` with its own driver (created in beforeAll, closed in afterAll). A case without a
 * program for the suite's language is registered with `it.skip`, and the group prints once why. With
 * `requires`, every case is skipped at run time when the driver lacks the capability, and the group says so.
 */
export function defineGroup(
  options: SuiteOptions,
  title: string,
  register: (group: Group) => void,
  requires?: GroupRequirement,
): void {
  describe(title, () => {
    let driver: SandboxDriver | undefined;
    let incapable = false;
    const skipped: string[] = [];
    // A case with no program in the suite's language is skipped, named as such, and listed in a warning. The
    // quickjs driver has a program for every case, so nothing is skipped today; the Python driver (issue 6) adds
    // its programs case by case and these skips track which are still missing.
    const skipMissing = (name: string): void => {
      skipped.push(name);
      it.skip(`${name} [no ${options.language} program yet]`, () => undefined);
    };
    beforeAll(async () => {
      driver = await options.createDriver();
      if (requires && !requires.capable(driver)) {
        incapable = true;
        console.warn(
          `[conformance] ${options.name}: every case in "${title}" is skipped: ${requires.reason}`,
        );
        return;
      }
      // Warm the pool (a few at once, so every worker starts) so behaviour timings exclude cold start.
      const code = HEALTH[options.language];
      if (code !== undefined) {
        const d = driver;
        const warm = () =>
          runProgram({ driver: d, code, language: options.language, limits: DEFAULT_TEST_LIMITS });
        await Promise.all(Array.from({ length: WARM_UP_RUNS }, warm));
      }
    });
    afterAll(async () => {
      await driver?.close();
    });
    const language = options.language;
    const toSource = (p: Program): Source =>
      typeof p === 'string' ? { code: p, language } : { code: p.code, language: p.language };
    const unlessIncapable =
      (body: () => Promise<void>) =>
      (ctx: { skip(note?: string): never }): Promise<void> =>
        incapable ? ctx.skip(requires?.reason) : body();
    const group: Group = {
      options,
      language,
      driver() {
        if (!driver) throw new Error('driver not created yet');
        return driver;
      },
      run(source, runOptions = {}) {
        return runProgram({
          driver: group.driver(),
          code: source.code,
          language: source.language,
          tools: runOptions.tools ?? [],
          limits: { ...DEFAULT_TEST_LIMITS, ...runOptions.limits },
          ...(runOptions.seed === undefined ? {} : { seed: runOptions.seed }),
          ...(runOptions.policy === undefined ? {} : { policy: runOptions.policy }),
          ...(runOptions.clock === undefined ? {} : { clock: runOptions.clock }),
          ...(runOptions.signal === undefined ? {} : { signal: runOptions.signal }),
          ...(runOptions.onLog === undefined ? {} : { onLog: runOptions.onLog }),
        });
      },
      program(name, programs, body, timeoutMs) {
        const p = programs[language];
        if (p === undefined) return skipMissing(name);
        it(
          name,
          unlessIncapable(() => body(toSource(p))),
          timeoutMs,
        );
      },
      programs(name, programs, body, timeoutMs) {
        const set = programs[language];
        if (set === undefined) return skipMissing(name);
        const sources = Object.fromEntries(
          Object.entries<Program>(set).map(([k, p]) => [k, toSource(p)]),
        ) as Record<keyof typeof set, Source>;
        it(
          name,
          unlessIncapable(() => body(sources)),
          timeoutMs,
        );
      },
      test(name, body, timeoutMs) {
        it(name, unlessIncapable(body), timeoutMs);
      },
      async expectHealthy() {
        const code = HEALTH[language];
        if (code === undefined) return;
        expect(expectSucceeded(await group.run({ code, language }))).toBe(2);
      },
    };
    register(group);
    if (skipped.length > 0) {
      console.warn(
        `[conformance] ${options.name}: ${skipped.length} case(s) in "${title}" have no ${language} program ` +
          `yet and are registered as skipped: ${skipped.join('; ')}`,
      );
    }
  });
}

export function describeResult(result: ExecutionResult): string {
  return JSON.stringify(result, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v)).slice(0, 2000);
}

/** Asserts success and returns the value. */
export function expectSucceeded(result: ExecutionResult): unknown {
  expect(result.status, describeResult(result)).toBe('succeeded');
  return result.status === 'succeeded' ? result.value : undefined;
}

/** Asserts a failure with the given code and returns the error. */
export function expectFailed(result: ExecutionResult, code: string): SerializedError & { line?: number } {
  expect(result.status, describeResult(result)).toBe('failed');
  if (result.status !== 'failed') throw new Error('unreachable');
  expect(result.error.code, describeResult(result)).toBe(code);
  expect(typeof result.error.message).toBe('string');
  return result.error;
}

/** A failure with a stable code (one of ERROR_CODES), or a success. Returns the value when succeeded. */
export function expectClean(result: ExecutionResult): { failed: boolean; value: unknown } {
  if (result.status === 'failed') {
    expect(isErrorCode(result.error.code), `unstable code: ${describeResult(result)}`).toBe(true);
    expect(typeof result.error.message).toBe('string');
    return { failed: true, value: undefined };
  }
  expect(result.status, describeResult(result)).toBe('succeeded');
  return { failed: false, value: result.value };
}

/** Nothing in an error crossing the boundary may carry a host path. */
export function expectNoHostPaths(text: string): void {
  for (const needle of ['/work/', 'node:', 'file://', 'node_modules', '.ts:']) {
    expect(text, `host path "${needle}" leaked in: ${text.slice(0, 500)}`).not.toContain(needle);
  }
}

export async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const start = performance.now();
  const value = await fn();
  return { value, ms: performance.now() - start };
}

/** Resolves once `predicate` holds, polling every 5 ms; rejects after `timeoutMs`. */
export async function waitFor(predicate: () => boolean, timeoutMs = 5_000): Promise<void> {
  const start = performance.now();
  while (!predicate()) {
    if (performance.now() - start > timeoutMs) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
