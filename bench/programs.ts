/**
 * The guest programs, identical text for every system. Each is the body of an async function
 * (top-level `await` and `return`), calling tools as `await tools.echo(args)`.
 */

/** Cold start and the throughput metric: the smallest program that returns a value. */
export const TRIVIAL = 'return 1 + 1';
export const TRIVIAL_RESULT = 2;

/** `n` sequential tool round trips; the sum proves every echo came back intact. */
export function toolLoop(n: number): string {
  return [
    'let sum = 0;',
    `for (let i = 0; i < ${n}; i++) {`,
    '  const r = await tools.echo({ i });',
    '  sum += r.i;',
    '}',
    'return sum;',
  ].join('\n');
}

export function toolLoopResult(n: number): number {
  return (n * (n - 1)) / 2;
}

/** Parks on a tool the benchmark holds until it releases every live execution at once. */
export const LIVE = 'const r = await tools.echo({ hold: 1 });\nreturn r.hold;';
export const LIVE_RESULT = 1;
