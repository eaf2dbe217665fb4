// The Toolformer library as the package exports it (`import ... from 'codecall'`, docs/toolformer.md): the seed's
// filter on its own worked examples, and the pieces the docs' example puts together.
import { describe, expect, it } from 'vitest';
import * as codecall from '../../src/index.ts';

describe('the Toolformer library from the public package', () => {
  it("keeps (4.5, 4.2, 1.8) and drops (2.1, 2.0, 1.9) at the default tau, the seed's examples", () => {
    expect(codecall.DEFAULT_TOOLFORMER_TAU).toBe(1);
    const kept = codecall.judgeSample({ noCall: 4.5, same: 4.2, call: 1.8 });
    expect(kept.keep).toBe(true);
    expect(kept.delta).toBeCloseTo(2.4, 10);
    const dropped = codecall.judgeSample({ noCall: 2.1, same: 2.0, call: 1.9 });
    expect(dropped.keep).toBe(false);
    expect(dropped.delta).toBeCloseTo(0.1, 10);
  });

  it('exports what the docs example uses', () => {
    for (const name of [
      'createPromptLogprobsClient',
      'createCompletionsSampler',
      'scoreSample',
      'samplePositions',
      'sampleCallsAt',
      'toolformerPipelineTools',
      'shardProgram',
      'keptSamples',
      'inlineFormLine',
      'chatFormLine',
      'deltaHistogramSvg',
      'createRuntime',
      'ToolRegistry',
    ] as const) {
      expect(typeof codecall[name], name).toBe('function');
    }
  });
});
