import { existsSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliTestDir, codecall, lastJson, startCodecall, until } from './cli-fixture.ts';
import type { CliRun } from './cli-fixture.ts';

// The first hour with `exec --db` (issue 19), in real processes: the commands a paused task prints work as
// printed (the tools module is remembered with the task); SIGINT at any moment pauses the task or stops before
// it is stored, never lets it run on to its end; a crashed run is taken over at once by `tasks resume`, and one
// a live process still holds is refused with its lease's expiry, or waited for with --wait.

const linux = existsSync('/proc/sys/kernel/random/boot_id') && existsSync('/proc/self/ns/pid');

const TOOLS = `
import { appendFileSync } from 'node:fs';
import { defineTool } from 'codecall';
const log = (line) => appendFileSync(process.env.SIDE_EFFECT_FILE, line + '\\n');
const input = { type: 'object', properties: { i: { type: 'number' } }, required: ['i'] };
export default [
  defineTool({
    name: 'pay',
    description: 'pays (needs approval)',
    requiresApproval: true,
    execute: (args) => (log('pay ' + args.to), 'paid ' + args.to),
  }),
  defineTool({
    name: 'slow',
    description: 'a slow step (idempotent)',
    effect: 'idempotent',
    input,
    async execute({ i }) {
      log('slow ' + i + ' start');
      await new Promise((r) => setTimeout(r, 300));
      log('slow ' + i + ' done');
      return i * 2;
    },
  }),
  defineTool({
    name: 'charge',
    description: 'a slow step that must not run twice (unsafe)',
    effect: 'unsafe',
    input,
    async execute({ i }) {
      log('charge ' + i + ' start');
      await new Promise((r) => setTimeout(r, 400));
      log('charge ' + i + ' done');
      return i;
    },
  }),
  defineTool({
    name: 'step',
    description: 'a step; with HANG_MS set, step 1 blocks its process that long (a hung worker)',
    effect: 'idempotent',
    input,
    execute({ i }) {
      log('step ' + i + ' start');
      if (i === 1 && process.env.HANG_MS) {
        const end = Date.now() + Number(process.env.HANG_MS);
        while (Date.now() < end) {}
      }
      log('step ' + i + ' done');
      return i;
    },
  }),
];
`;

/** The words of one command line as a POSIX shell splits them: single quotes, and a `#` comment at the end. */
function shellWords(line: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let quoted = false;
  for (const c of line) {
    if (quoted) {
      if (c === "'") quoted = false;
      else word += c;
    } else if (c === "'") {
      quoted = true;
      inWord = true;
    } else if (c === ' ') {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else if (c === '#' && !inWord) {
      break;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (inWord) words.push(word);
  return words;
}

/** The commands a paused task's report lists (lines `  codecall ...`), split into words. */
function printedCommands(stderr: string): string[][] {
  return stderr
    .split('\n')
    .filter((l) => l.startsWith('  codecall '))
    .map((l) => shellWords(l.trim()));
}

/** Runs a printed command as it is (`codecall` being the built CLI). */
function runPrinted(env: Record<string, string>, words: readonly string[]): Promise<CliRun> {
  expect(words[0]).toBe('codecall');
  return codecall(env, ...words.slice(1));
}

const taskIdIn = (text: string): string | undefined => /task (task_\w+) stored in/.exec(text)?.[1];

// Several processes per case, each a second or more to start on a loaded machine.
describe('codecall exec --db: the first hour (the built CLI, real processes)', { timeout: 120_000 }, () => {
  let dir: string;
  let tools: string;
  let n = 0;
  /** A fresh database and side-effect log per case. */
  const fresh = () => {
    n++;
    const effects = join(dir, `effects-${n}.txt`);
    return { db: join(dir, `tasks-${n}.db`), effects, env: { SIDE_EFFECT_FILE: effects } };
  };
  const effectsOf = async (file: string): Promise<string[]> =>
    (await readFile(file, 'utf8').catch(() => '')).split('\n').filter((l) => l !== '');

  beforeAll(async () => {
    dir = await cliTestDir('cli-first-hour');
    tools = join(dir, 'tools.js');
    await writeFile(tools, TOOLS);
    await writeFile(join(dir, 'pay.js'), "return await tools.pay({ to: 'landlord', amount: 900 });\n");
    await writeFile(
      join(dir, 'loop.js'),
      'const out = [];\nfor (let i = 0; i < 6; i++) out.push(await tools.slow({ i }));\nreturn out;\n',
    );
    await writeFile(
      join(dir, 'charges.js'),
      'const out = [];\nfor (let i = 0; i < 3; i++) out.push(await tools.charge({ i }));\nreturn out;\n',
    );
    await writeFile(
      join(dir, 'steps.js'),
      'const out = [];\nfor (let i = 0; i < 3; i++) out.push(await tools.step({ i }));\nreturn out;\n',
    );
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  describe('1. the commands a paused task prints', () => {
    it('are exact (ids, database, tools module): run as printed, the task completes and the tool ran once', async () => {
      const { db, effects, env } = fresh();
      const paused = await codecall(env, 'exec', join(dir, 'pay.js'), '--db', db, '--tools', tools);
      expect(paused.code, paused.stderr).toBe(0);
      const id = taskIdIn(paused.stderr);
      expect(id).toBeDefined();
      expect(paused.stderr).toContain(`task ${id} paused (approval_required)`);
      expect(paused.stderr).not.toContain('APPROVAL_ID');
      const commands = printedCommands(paused.stderr);
      expect(commands.map((c) => c.slice(0, 5))).toEqual([
        ['codecall', 'tasks', 'approve', id, 'call-1'],
        ['codecall', 'tasks', 'reject', id, 'call-1'],
      ]);
      const approve = commands[0] ?? [];
      expect(approve).toEqual(expect.arrayContaining(['--db', db, '--tools', tools, '--resume']));

      const done = await runPrinted(env, approve);
      expect(done.code, done.stderr).toBe(0);
      expect(done.stdout).toContain('paid landlord');
      expect(done.stderr).toContain(`task ${id} succeeded`);
      expect(await effectsOf(effects)).toEqual(['pay landlord']);
    });

    it('need no --tools: the module is remembered with the task (an explicit one still wins; a vanished one is named)', async () => {
      const { db, effects, env } = fresh();
      const moved = join(dir, 'moved-tools.js');
      await writeFile(moved, TOOLS);
      const first = await codecall(env, 'exec', join(dir, 'pay.js'), '--db', db, '--tools', moved, '--json');
      const view = lastJson(first.stdout);
      expect(view).toMatchObject({ status: 'paused', metadata: { codecall_tools_module: moved } });
      const id = String(view.task_id);
      // --json keeps stdout to the view; the next steps are on stderr all the same.
      expect(printedCommands(first.stderr)[0]).toEqual(expect.arrayContaining(['--tools', moved]));
      const show = await codecall(env, 'tasks', 'show', id, '--db', db);
      expect(show.stdout).toContain(`tools:       ${moved}`);

      await rm(moved);
      const vanished = await codecall(env, 'tasks', 'approve', id, 'call-1', '--db', db, '--resume');
      expect(vanished.code).toBe(2);
      expect(vanished.stderr).toContain(
        `error NOT_FOUND: the tools module task ${id} was started with, ${moved}`,
      );
      expect(vanished.stderr).toContain('--tools MODULE');
      // Nothing was recorded: the task still waits for the decision.
      expect(lastJson((await codecall(env, 'tasks', 'show', id, '--db', db, '--json')).stdout)).toMatchObject(
        {
          status: 'paused',
          pending_approvals: [{ id: 'call-1' }],
        },
      );

      const explicit = await codecall(
        env,
        'tasks',
        'approve',
        id,
        'call-1',
        '--db',
        db,
        '--tools',
        tools,
        '--resume',
      );
      expect(explicit.code, explicit.stderr).toBe(0);
      expect(explicit.stdout).toContain('paid landlord');
      expect(await effectsOf(effects)).toEqual(['pay landlord']);

      // A task paused by request resumes with the remembered module and no flag but --db.
      await writeFile(moved, TOOLS);
      const second = fresh();
      const w = startCodecall(
        second.env,
        ...['exec', join(dir, 'loop.js'), '--db', second.db, '--tools', moved, '--json'],
      );
      await until(async () => (await effectsOf(second.effects)).length >= 2);
      w.child.kill('SIGINT');
      expect(await w.exited).toBe(0);
      const stopped = lastJson(w.stdout());
      expect(stopped).toMatchObject({ status: 'paused', pause_reason: 'user_request' });
      const [resume] = printedCommands(w.stderr());
      expect(resume).toEqual([
        'codecall',
        'tasks',
        'resume',
        stopped.task_id,
        '--db',
        second.db,
        '--tools',
        moved,
      ]);
      const resumed = await codecall(
        second.env,
        'tasks',
        'resume',
        String(stopped.task_id),
        '--db',
        second.db,
        '--json',
      );
      expect(lastJson(resumed.stdout)).toMatchObject({
        status: 'succeeded',
        result: { output: [0, 2, 4, 6, 8, 10] },
      });
    });
  });

  describe('2. SIGINT at any moment', () => {
    /** exec --db on a program of six 300 ms steps, SIGINT when `when` says; what came of it. */
    async function interrupted(
      when: (w: ReturnType<typeof startCodecall>, effects: string) => Promise<void>,
    ) {
      const { db, effects, env } = fresh();
      const w = startCodecall(env, 'exec', join(dir, 'loop.js'), '--db', db, '--tools', tools, '--json');
      const signalled = new Promise<string | null>((resolve) => w.child.on('exit', (_c, s) => resolve(s)));
      await when(w, effects);
      w.child.kill('SIGINT');
      const code = await w.exited;
      const signal = await signalled;
      const list = existsSync(db) ? await codecall(env, 'tasks', 'list', '--db', db, '--json') : null;
      const tasks = list ? (lastJson(list.stdout).tasks as { task_id: string; status: string }[]) : [];
      return { code, signal, w, tasks, effects: await effectsOf(effects), db, env };
    }

    /** What every SIGINT must come to: paused and resumable (exit 0), or nothing stored (exit 130 / killed). */
    function expectPausedOrNothing(r: Awaited<ReturnType<typeof interrupted>>): 'paused' | 'nothing' {
      for (const t of r.tasks) expect(t.status).not.toBe('succeeded');
      expect(r.effects.filter((l) => l.endsWith('done')).length).toBeLessThan(6);
      if (r.code === 0) {
        expect(lastJson(r.w.stdout())).toMatchObject({
          status: 'paused',
          pause_reason: 'user_request',
          resumable: true,
        });
        expect(r.tasks).toHaveLength(1);
        expect(r.w.stderr()).toContain('pausing task');
        return 'paused';
      }
      // Before the CLI had started (Node's own default) or before the task was stored.
      if (r.code === null) expect(r.signal).toBe('SIGINT');
      else {
        expect(r.code).toBe(130);
        expect(r.w.stderr()).toContain('interrupted (SIGINT)');
      }
      expect(r.tasks).toEqual([]);
      expect(r.effects).toEqual([]);
      return 'nothing';
    }

    it('at once after spawn: the process stops with nothing stored', async () => {
      const r = await interrupted(() => Promise.resolve());
      expect(expectPausedOrNothing(r)).toBe('nothing');
    });

    it('while the CLI starts (the command not yet begun): stopped with nothing stored, saying so', async () => {
      const r = await interrupted(() => new Promise((resolve) => setTimeout(resolve, 250)));
      expectPausedOrNothing(r);
    });

    it('right after the task is stored (still queued): the task pauses, resumable, and runs on to its end when resumed', async () => {
      const r = await interrupted(async (w) => until(() => taskIdIn(w.stderr()) !== undefined));
      expect(expectPausedOrNothing(r)).toBe('paused');
      const id = taskIdIn(r.w.stderr()) ?? '';
      const resumed = await codecall(r.env, 'tasks', 'resume', id, '--db', r.db, '--json');
      expect(lastJson(resumed.stdout)).toMatchObject({
        status: 'succeeded',
        result: { output: [0, 2, 4, 6, 8, 10] },
      });
      // At most the first step had begun (a pause lets it finish); each step ran once over both processes.
      expect(r.effects.length).toBeLessThanOrEqual(2);
      const all = await effectsOf(r.env.SIDE_EFFECT_FILE);
      expect(all.filter((l) => l.endsWith('done'))).toEqual([0, 1, 2, 3, 4, 5].map((i) => `slow ${i} done`));
    });

    it('while it runs: the task pauses after the step under way', async () => {
      const r = await interrupted(async (_w, effects) =>
        until(async () => (await effectsOf(effects)).includes('slow 1 done')),
      );
      expect(expectPausedOrNothing(r)).toBe('paused');
    });
  });

  describe.skipIf(!linux)('3. tasks resume after a crash', () => {
    it('takes over at once a task whose process was SIGKILLed, with the remembered tools; completed steps do not run again', async () => {
      const { db, effects, env } = fresh();
      const w = startCodecall(env, 'exec', join(dir, 'loop.js'), '--db', db, '--tools', tools);
      await until(async () => (await effectsOf(effects)).includes('slow 2 start'));
      w.child.kill('SIGKILL');
      await w.exited;
      const id = taskIdIn(w.stderr()) ?? '';
      const before = await effectsOf(effects);
      const started = Date.now();
      const resumed = await codecall(env, 'tasks', 'resume', id, '--db', db, '--json');
      expect(resumed.stderr).not.toContain('ILLEGAL_TRANSITION');
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(lastJson(resumed.stdout)).toMatchObject({
        status: 'succeeded',
        attempts: 2,
        result: { output: [0, 2, 4, 6, 8, 10] },
      });
      // Well within the dead worker's 15 s lease.
      expect(Date.now() - started).toBeLessThan(14_000);
      const after = (await effectsOf(effects)).slice(before.length);
      for (const line of before.filter((l) => l.endsWith('done')))
        expect(after).not.toContain(line.replace('done', 'start'));
      // The step in flight at the kill is idempotent: it runs again.
      expect(after[0]).toBe('slow 2 start');
    });

    it('an unsafe call lost in the crash asks a human; the printed retry command completes the task', async () => {
      const { db, effects, env } = fresh();
      const w = startCodecall(env, 'exec', join(dir, 'charges.js'), '--db', db, '--tools', tools);
      await until(async () => (await effectsOf(effects)).includes('charge 1 start'));
      w.child.kill('SIGKILL');
      await w.exited;
      const id = taskIdIn(w.stderr()) ?? '';
      const resumed = await codecall(env, 'tasks', 'resume', id, '--db', db);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stderr).toContain(`task ${id} paused (needs_attention)`);
      expect(resumed.stderr).toContain('tools.charge({"i":1}) may or may not have run');
      const retry = printedCommands(resumed.stderr).find((c) => c.includes('retry'));
      expect(retry).toEqual([
        'codecall',
        'tasks',
        'resolve',
        id,
        'retry',
        '--db',
        db,
        '--tools',
        tools,
        '--resume',
      ]);
      const done = await runPrinted(env, retry ?? []);
      expect(done.code, done.stderr).toBe(0);
      expect(done.stdout).toContain('[ 0, 1, 2 ]');
      const log = await effectsOf(effects);
      expect(log.filter((l) => l === 'charge 0 start')).toHaveLength(1);
      expect(log.filter((l) => l === 'charge 1 start')).toHaveLength(2); // once lost, once retried by a human
      expect(log.filter((l) => l === 'charge 2 start')).toHaveLength(1);
    });

    it('a lease a live process holds: refused with its holder and expiry; --wait takes over once it runs out', async () => {
      const { db, effects, env } = fresh();
      // A hung worker: alive, but its event loop blocked in a tool, so it no longer renews its 10 s lease.
      const hung = startCodecall(
        { ...env, HANG_MS: '60000', CODECALL_LEASE_MS: '10000' },
        ...['exec', join(dir, 'steps.js'), '--db', db, '--tools', tools],
      );
      try {
        await until(async () => (await effectsOf(effects)).includes('step 1 start'));
        const id = taskIdIn(hung.stderr()) ?? '';
        const refused = await codecall(env, 'tasks', 'resume', id, '--db', db);
        expect(refused.code).toBe(2);
        expect(refused.stderr).toMatch(
          new RegExp(
            `error ILLEGAL_TRANSITION: task ${id} is running in another process: pid ${hung.child.pid} on host \\S+ holds its lease until \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z \\(in \\d+ s\\)`,
          ),
        );
        expect(refused.stderr).toContain(`codecall tasks resume ${id} --db ${db} --wait`);

        const waited = await codecall(env, 'tasks', 'resume', id, '--db', db, '--wait', '--json');
        expect(waited.code, waited.stderr).toBe(0);
        expect(waited.stderr).toContain('waiting for it');
        expect(waited.stderr).toContain('the lease is free; taking the task over');
        expect(lastJson(waited.stdout)).toMatchObject({ status: 'succeeded', result: { output: [0, 1, 2] } });
      } finally {
        hung.child.kill('SIGKILL');
        await hung.exited;
      }
    });
  });
});
