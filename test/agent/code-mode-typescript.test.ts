// An agent's TypeScript code steps with a namespace (issue 19): the block is lowered by the exec path's
// TypeScript compiler, not dropped by sucrase, so the namespace works in its step and in the steps after it, and a
// failing step's line is the block's own.
import { describe, expect, it } from 'vitest';
import { reply } from '../model/scripted-model-server.ts';
import { useAgentFixture } from './agent-fixture.ts';

function ts(code: string): string {
  return `Here is the code:\n\`\`\`typescript\n${code}\n\`\`\``;
}

describe('agent, code mode, TypeScript with a namespace', () => {
  const fx = useAgentFixture('agent-code-typescript');

  it('a namespace declared in one step is used in it and in the next', async () => {
    fx.model.push(
      reply({
        content: ts(
          [
            'namespace Pricing {',
            '  export const VAT: number = 0.2;',
            '  export async function gross(product: string): Promise<number> {',
            '    const p = await tools.get_price({ product });',
            '    return Math.round(p.cents * (1 + VAT));',
            '  }',
            '}',
            'await Pricing.gross("tea")',
          ].join('\n'),
        ),
      }),
      reply({
        content: ts(
          'const coffee: number = await Pricing.gross("coffee");\nfinal_answer({ coffee, vat: Pricing.VAT })',
        ),
      }),
    );
    const submitted = await fx.runtime.submit({ instruction: 'Gross prices?', language: 'typescript' });
    const view = await fx.runtime.run(submitted.task_id);
    expect(view.status, JSON.stringify(view.error)).toBe('succeeded');
    expect(view.result?.output).toEqual({ coffee: 720, vat: 0.2 });
    expect(view.steps?.map((s) => s.ok)).toEqual([true, true]);
    expect(view.steps?.[0]?.value).toBe(360);
    expect(fx.calls.map((c) => c.name)).toEqual(['get_price', 'get_price']);
  });

  it("a step failing after a namespace is reported at the block's line", async () => {
    fx.model.push(
      reply({ content: ts('namespace N {\n  export const x = 1;\n}\nconst y: number = N.x;\nnull!.boom;') }),
      reply({ content: 'Giving up.' }),
    );
    const submitted = await fx.runtime.submit({ instruction: 'Fail once', language: 'typescript' });
    const view = await fx.runtime.run(submitted.task_id);
    expect(view.steps?.[0]?.ok).toBe(false);
    expect(view.steps?.[0]?.error).toMatchObject({ code: 'GUEST_ERROR', name: 'TypeError', line: 5 });
  });
});
