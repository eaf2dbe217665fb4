// An agent task with network access (issue 21): the system prompt tells the model where fetch reaches, and the
// code it writes fetches through the host (a real server on loopback, allowed by the operator's egress).
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEgress } from '../../src/egress/index.ts';
import { reply } from '../model/scripted-model-server.ts';
import { js, useAgentFixture } from './agent-fixture.ts';

describe('agent, code mode, with network access', () => {
  const fx = useAgentFixture('agent-fetch', { runtime: { egress: createEgress({ allowPrivate: true }) } });
  let server: Server;
  let port = 0;
  beforeAll(async () => {
    server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ temp: 21 }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('names the allowed hosts in the prompt, and the model’s fetch works', async () => {
    fx.model.push(
      reply({
        content: js(
          `const w = await (await fetch('http://127.0.0.1:${port}/weather')).json();\nfinal_answer(w.temp)`,
        ),
      }),
    );
    const { task_id } = await fx.runtime.submit({
      instruction: 'How warm is it?',
      constraints: { networkAccess: { allow: [`127.0.0.1:${port}`], allowHttp: true } },
    });
    const view = await fx.runtime.run(task_id);
    expect(view.status).toBe('succeeded');
    expect(view.result?.output).toBe(21);
    const system = (fx.model.requests[0]?.body.messages as { content: string }[])[0]?.content ?? '';
    expect(system).toContain(`reaches only \`127.0.0.1:${port}\``);
    expect(system).not.toContain('There is no network');
  });

  it('a task without network access is told there is none', async () => {
    fx.model.push(reply({ content: 'none' }));
    const { task_id } = await fx.runtime.submit({ instruction: 'Anything?' });
    await fx.runtime.run(task_id);
    const system = (fx.model.requests.at(-1)?.body.messages as { content: string }[])[0]?.content ?? '';
    expect(system).toContain('There is no network');
  });
});
