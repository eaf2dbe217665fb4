import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reply, startScriptedModelServer } from '../model/scripted-model-server.ts';
import type { ScriptedModelServer } from '../model/scripted-model-server.ts';
import { NO_BROWSER, signIn, useConsoleFixture, watchErrors } from './console-fixture.ts';

// An instruction task from the console's form, with a scripted model behind a real local OpenAI-compatible
// server: the page shows the instruction, and the timeline the model's replies, the code it wrote and its calls.

describe.skipIf(NO_BROWSER !== null)(
  `web console agent tasks${NO_BROWSER ? ` (skipped: ${NO_BROWSER})` : ''}`,
  () => {
    let model: ScriptedModelServer;
    beforeAll(async () => {
      model = await startScriptedModelServer();
    });
    afterAll(async () => {
      await model.close();
    });
    const fx = useConsoleFixture('console-agent', { modelUrl: () => model.baseUrl });

    it('submits an instruction and shows the model replies, code steps and tool calls', async () => {
      model.push(
        reply({
          content: 'Paying now.\n```js\nconst r = await tools.pay({ to: "Bob", amount: 12 });\nr\n```',
        }),
        reply({ content: '```js\nfinal_answer(r.toUpperCase())\n```' }),
      );
      const key = await fx.key('agent-co');
      await fx.withPage('agent-task', async (page) => {
        const errors = watchErrors(page);
        await signIn(page, fx.base, key);
        await page.getByTestId('tab-submit').click();
        await page.getByTestId('kind-instruction').check();
        await page.getByTestId('program').fill('Pay Bob 12 and shout the receipt');
        await page.getByTestId('max-steps').fill('4');
        await page.getByTestId('submit').click();
        await page.locator('[data-testid="task-detail"][data-status="succeeded"]').waitFor();
        expect(await page.getByTestId('instruction').textContent()).toBe('Pay Bob 12 and shout the receipt');
        expect(JSON.parse((await page.getByTestId('result').textContent()) ?? '')).toBe('PAID 12 TO BOB');
        const replies = page.getByTestId('tl-model').filter({ hasText: 'Model replied' });
        await expect.poll(() => replies.count()).toBe(2);
        expect(await replies.first().textContent()).toContain('Paying now.');
        const code = page.getByTestId('tl-code').first();
        expect(await code.textContent()).toContain('tools.pay');
        expect(await code.locator('.tok-keyword').first().textContent()).toBe('const');
        const call = page.locator('[data-testid="tool-call"][data-tool="tools.pay"]');
        expect(JSON.parse((await call.getByTestId('call-args').textContent()) ?? '')).toEqual({
          to: 'Bob',
          amount: 12,
        });
        expect(await call.getByTestId('call-result').textContent()).toContain('paid 12 to Bob');
        expect(errors).toEqual([]);
      });
      expect(model.requests.at(-1)?.body.model).toBe('scripted');
    });

    it("shows an instruction task's answer schema beside its instruction", async () => {
      const schema = { type: 'object', properties: { total: { type: 'number' } }, required: ['total'] };
      model.push(reply({ content: '{"total": 12}' }));
      const key = await fx.key('agent-schema');
      const { task_id } = await fx.api<{ task_id: string }>(key, 'POST', '/api/v1/tasks', {
        instruction: 'Add up the bill',
        answer_schema: schema,
      });
      await fx.withPage('agent-answer-schema', async (page) => {
        const errors = watchErrors(page);
        await signIn(page, fx.base, key);
        await page.goto(`${fx.base}/#/tasks/${task_id}`);
        await page.locator('[data-testid="task-detail"][data-status="succeeded"]').waitFor();
        expect(JSON.parse((await page.getByTestId('answer-schema').textContent()) ?? '')).toEqual(schema);
        expect(JSON.parse((await page.getByTestId('result').textContent()) ?? '')).toEqual({ total: 12 });
        expect(errors).toEqual([]);
      });
      const view = await fx.api<{ answer_schema: unknown }>(key, 'GET', `/api/v1/tasks/${task_id}`);
      expect(view.answer_schema).toEqual(schema);
    });
  },
);
