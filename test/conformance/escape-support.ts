import { existsSync, rmSync } from 'node:fs';
import { types } from 'node:util';
import { afterEach, beforeAll, expect, it } from 'vitest';
import type {
  ExecutionLimits,
  ExecutionResult,
  SandboxPolicy,
  ToolDefinition,
} from '../../src/spec/index.ts';
import type { Group, PerLanguage, Source } from './harness.ts';
import { describeResult, expectClean, timed } from './harness.ts';

/** A guest that reached the host writes this file; the host checks it never appears. */
export const ESCAPE_MARKER = '/tmp/codecall-escape-marker';

/**
 * JavaScript that evaluates `expr` (which tries to reach a host object) and, if it got anything, tries to
 * use it: write the marker file, set `__escaped` on it. Returns a report, or the name of what it threw.
 */
export function jsPayload(expr: string): string {
  return `let reached;
try { reached = ${expr}; } catch (e) { return { threw: String(e && e.name) }; }
const report = { type: typeof reached, hostLike: false, wrote: false };
try { if (reached && (reached.versions || reached.pid || reached.env || reached.getBuiltinModule)) report.hostLike = true; } catch {}
try { reached.getBuiltinModule('fs').writeFileSync(${JSON.stringify(ESCAPE_MARKER)}, 'escaped'); report.wrote = true; } catch {}
try { reached.mainModule.require('fs').writeFileSync(${JSON.stringify(ESCAPE_MARKER)}, 'escaped'); report.wrote = true; } catch {}
try { reached.__escaped = true; } catch {}
return report;`;
}

/**
 * Python that evaluates `expr` (a chain through the object graph to `os`; `setup` may define helpers) and uses
 * what it reached: its uid, the root it sees, the marker written. In Python reaching `os` is allowed and no
 * escape: the report shows it stays in the sandbox (the host then checks the marker is not on its /tmp).
 */
export function pyPayload(expr: string, setup = ''): string {
  return `${setup}
def _payload():
    try:
        reached = ${expr}
    except BaseException as e:
        return {'threw': type(e).__name__}
    report = {'module': getattr(reached, '__name__', None)}
    try:
        report['uid'] = reached.getuid()
        report['root'] = sorted(reached.listdir('/'))
        fd = reached.open(${JSON.stringify(ESCAPE_MARKER)}, reached.O_WRONLY | reached.O_CREAT, 0o644)
        reached.write(fd, b'escaped')
        reached.close(fd)
        report['wrote'] = 'in the sandbox'
    except BaseException as e:
        report['error'] = type(e).__name__
    return report
_payload()`;
}

/** The python sandbox's view of / (bwrap-args.ts): its own mounts and the host's top-level links into /usr. */
export function sandboxRoot(): string[] {
  const own = ['dev', 'etc', 'proc', 'tmp', 'usr', 'workspace'];
  const linked = ['bin', 'sbin', 'lib', 'lib32', 'lib64', 'libx32'].filter((d) => existsSync(`/${d}`));
  return [...own, ...linked].sort();
}

/** Walks a value iteratively: it must be plain data (no functions, symbols, accessors or proxies). */
export function expectPlainData(value: unknown): void {
  const stack: { v: unknown; path: string }[] = [{ v: value, path: 'value' }];
  const seen = new Set<object>();
  while (stack.length > 0) {
    const { v, path } = stack.pop() as { v: unknown; path: string };
    expect(typeof v, path).not.toBe('function');
    expect(typeof v, path).not.toBe('symbol');
    if (typeof v !== 'object' || v === null || seen.has(v)) continue;
    seen.add(v);
    expect(types.isProxy(v), `${path} is a Proxy`).toBe(false);
    if (v instanceof Map) {
      for (const [k, x] of v) stack.push({ v: k, path: `${path}<key>` }, { v: x, path: `${path}.get()` });
      continue;
    }
    if (v instanceof Set) {
      for (const x of v) stack.push({ v: x, path: `${path}<item>` });
      continue;
    }
    for (const key of Reflect.ownKeys(v)) {
      const d = Object.getOwnPropertyDescriptor(v, key);
      const where = `${path}.${String(key)}`;
      expect(d && 'value' in d, `${where} is an accessor`).toBe(true);
      if (d && 'value' in d) stack.push({ v: d.value, path: where });
    }
  }
}

/** Runs a hostile program: it must end cleanly and promptly; a success must carry plain data only. */
export async function expectContained(
  g: Group,
  src: { code: string; language: 'javascript' | 'typescript' | 'python' },
  options: {
    limits?: Partial<ExecutionLimits>;
    tools?: readonly ToolDefinition[];
    policy?: SandboxPolicy;
  } = {},
): Promise<{ result: ExecutionResult; failed: boolean; value: unknown }> {
  const limits = { timeoutMs: 2_000, ...options.limits };
  const { value: result, ms } = await timed(() =>
    g.run(src, {
      limits,
      ...(options.tools ? { tools: options.tools } : {}),
      ...(options.policy ? { policy: options.policy } : {}),
    }),
  );
  expect(ms, 'the execution must end within its timeout plus a margin').toBeLessThan(
    limits.timeoutMs + 5_000,
  );
  // A hostile program that does not even compile would pass vacuously.
  expect(result.status === 'failed' && result.error.code, 'the hostile program must compile').not.toBe(
    'SYNTAX_ERROR',
  );
  if (process.env.CONFORMANCE_VERBOSE)
    console.info(`[contained] ${Math.round(ms)} ms ${describeResult(result).slice(0, 300)}`);
  const clean = expectClean(result);
  // By the execution's own clock: on a loaded machine the host's wait also counts queueing and teardown.
  if (result.status === 'failed' && result.resources.wallMs >= limits.timeoutMs) {
    expect(result.error.code, `ran into its deadline: ${describeResult(result)}`).toBe('TIMEOUT');
  }
  if (!clean.failed) expectPlainData(clean.value);
  return { result, ...clean };
}

interface Pristine {
  push: unknown;
  then: unknown;
  parse: unknown;
  stringify: unknown;
  iterator: unknown;
  call: unknown;
  objectProtoKeys: number;
  arrayProtoKeys: number;
}

/** The current value of an own property, read without calling or binding anything. */
function own(target: object, key: PropertyKey): unknown {
  return Object.getOwnPropertyDescriptor(target, key)?.value;
}

function snapshot(): Pristine {
  return {
    push: own(Array.prototype, 'push'),
    then: own(Promise.prototype, 'then'),
    parse: own(JSON, 'parse'),
    stringify: own(JSON, 'stringify'),
    iterator: own(Array.prototype, Symbol.iterator),
    call: own(Function.prototype, 'call'),
    objectProtoKeys: Reflect.ownKeys(Object.prototype).length,
    arrayProtoKeys: Reflect.ownKeys(Array.prototype).length,
  };
}

/** After every case: the host is untouched and the driver still runs the language's health program. */
export function useHostChecks(g: Group): void {
  let pristine: Pristine | undefined;
  const exitCode = process.exitCode;
  beforeAll(() => {
    rmSync(ESCAPE_MARKER, { force: true });
    pristine = snapshot();
  });
  afterEach(async () => {
    expect((globalThis as Record<string, unknown>).__escaped, 'host globalThis.__escaped').toBeUndefined();
    expect(
      (process as unknown as Record<string, unknown>).__escaped,
      'host process.__escaped',
    ).toBeUndefined();
    expect(existsSync(ESCAPE_MARKER), `escape marker ${ESCAPE_MARKER} was written`).toBe(false);
    expect(({} as Record<string, unknown>).polluted, 'host Object.prototype polluted').toBeUndefined();
    const now = snapshot();
    for (const key of Object.keys(now) as (keyof Pristine)[]) {
      expect(now[key], `host intrinsic changed: ${key}`).toBe(pristine?.[key]);
    }
    expect(process.exitCode).toBe(exitCode);
    await g.expectHealthy();
  });
}

/**
 * One case's programs, one per language. An attack with no equivalent in a language (a Proxy has none in Python)
 * says why in `na`: that language skips the case saying so, rather than as a program not written yet.
 */
export type EscapePrograms = PerLanguage<string> & { readonly na?: string };

/** Registers `name` with the group's language's program, or skips it saying why it does not apply. */
export function escapeProgram(
  g: Group,
  name: string,
  programs: EscapePrograms,
  body: (src: Source) => Promise<void>,
  timeoutMs?: number,
): void {
  const { na, ...byLanguage } = programs;
  if (byLanguage[g.language] === undefined && na !== undefined) return notApplicable(g, name, na);
  g.program(name, byLanguage, body, timeoutMs);
}

/** A case (or a family of them) that has no meaning in the group's language: one skipped entry saying why. */
export function notApplicable(g: Group, what: string, why: string): void {
  it.skip(`${what} [not applicable to ${g.language}: ${why}]`, () => undefined);
}

/**
 * The cases of a family the group's language has a program for (without `na`). The ones that do not apply are
 * listed in one skipped entry with their reasons; a case with neither is kept, to be skipped as "not yet".
 */
export function applicable(
  g: Group,
  family: string,
  cases: Record<string, EscapePrograms>,
): [string, PerLanguage<string>][] {
  const kept: [string, PerLanguage<string>][] = [];
  const dropped = new Map<string, string[]>();
  for (const [name, { na, ...programs }] of Object.entries(cases)) {
    if (programs[g.language] === undefined && na !== undefined)
      dropped.set(na, [...(dropped.get(na) ?? []), name]);
    else kept.push([name, programs]);
  }
  for (const [why, names] of dropped) notApplicable(g, `${family}: ${names.join('; ')}`, why);
  return kept;
}

/** Registers one contained-program case per entry of `cases`. */
export function containedCases(
  g: Group,
  cases: Record<string, EscapePrograms>,
  options: { limits?: Partial<ExecutionLimits>; tools?: () => readonly ToolDefinition[] } = {},
): void {
  for (const [name, programs] of Object.entries(cases)) {
    escapeProgram(g, name, programs, async (src) => {
      await expectContained(g, src, {
        ...(options.limits ? { limits: options.limits } : {}),
        ...(options.tools ? { tools: options.tools() } : {}),
      });
    });
  }
}
