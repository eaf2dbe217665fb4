// `answer_schema` on POST /api/v1/tasks and batches (issue 23): a schema the agent cannot compile, one that is not
// an object, or one on a code task is a 400 naming the field, and nothing is stored; a good one is kept with the task.
import { describe, expect, it } from 'vitest';
import { createAgent } from '../../src/agent/index.ts';
import { countTasks, useApiFixture } from './api-fixture.ts';
import type { ErrorBody } from './api-fixture.ts';

const SCHEMA = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] };

describe('HTTP answer_schema', () => {
  const fx = useApiFixture('http-answer-schema', {
    start: false,
    runtime: { agent: createAgent({ model: null, tools: [] }) },
  });
  const post = async (url: string, payload: unknown) => {
    const k = await fx.key('acme');
    return fx.app.inject({
      method: 'POST',
      url,
      headers: { ...k.headers, 'content-type': 'application/json' },
      payload: JSON.stringify(payload),
    });
  };

  it('refuses a schema that does not compile, is not an object, or is on a code task, storing nothing', async () => {
    const before = await countTasks(fx.store);
    const cases: [unknown, string, string][] = [
      [{ instruction: 'x', answer_schema: { type: 'nope' } }, 'INVALID_ARGUMENT', 'answer_schema'],
      [{ instruction: 'x', answer_schema: { $ref: '#/$defs/none' } }, 'INVALID_ARGUMENT', 'answer_schema'],
      [{ instruction: 'x', answer_schema: [1] }, 'BAD_REQUEST', ''],
      [{ code: 'return 1', answer_schema: SCHEMA }, 'BAD_REQUEST', 'answer_schema'],
    ];
    for (const [body, code, field] of cases) {
      const res = await post('/api/v1/tasks', body);
      expect(res.statusCode, res.body).toBe(400);
      const error = res.json<ErrorBody>().error;
      expect(error.code).toBe(code);
      if (field !== '') expect(error.details).toMatchObject({ field });
      else expect(error.message).toContain('answer_schema');
    }
    const batch = await post('/api/v1/tasks/batch', {
      tasks: [
        { instruction: 'a', answer_schema: SCHEMA },
        { instruction: 'b', answer_schema: { type: 'object', required: 'n' } },
      ],
    });
    expect(batch.statusCode, batch.body).toBe(400);
    expect(batch.json<ErrorBody>().error.details).toMatchObject({ field: 'tasks[1].answer_schema' });
    expect(await countTasks(fx.store)).toBe(before);
  });

  it('keeps a good schema with the task', async () => {
    const res = await post('/api/v1/tasks', { instruction: 'count', answer_schema: SCHEMA });
    expect(res.statusCode, res.body).toBe(201);
    const task = await fx.store.getTask(res.json<{ task_id: string }>().task_id);
    expect(task?.input.kind === 'instruction' && task.input.answerSchema).toEqual(SCHEMA);
  });
});
