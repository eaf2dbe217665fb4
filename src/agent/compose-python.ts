import type { ComposedProgram } from './compose-program.ts';

/** The first line the python guest runner reads the earlier steps from (a comment to Python itself). */
export const PYTHON_STEPS_PREFIX = '# __cc_steps__ = ';

/**
 * A Python step after the earlier successful ones. Python needs no rewriting: the guest runner runs the earlier
 * blocks first, silently, in the same globals (so their names stay defined), then the current block, whose
 * lines are the program's from line 2 on.
 */
export function composePythonProgram(earlier: readonly string[], current: string): ComposedProgram {
  return {
    code: `${PYTHON_STEPS_PREFIX}${JSON.stringify(earlier)}\n${current}`,
    currentFirstLine: 2,
    currentLines: current.split('\n').length,
  };
}
