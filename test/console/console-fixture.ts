// Shared set-up of the browser tests: the console built by Vite into a temp dir, a real service on loopback
// serving it (SQLite file, quickjs sandbox, key auth, tools of which one needs approval), Debian's Chromium
// driven by playwright-core, keys per tenant, and a screenshot of the page when a test fails.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import type { Browser, Page } from 'playwright-core';
import { build } from 'vite';
import { afterAll, beforeAll } from 'vitest';
import { z } from 'zod';
import { loadConfig, newApiKey } from '../../src/service/index.ts';
import type { ToolDefinition } from '../../src/spec/index.ts';
import { defineTool } from '../../src/tools/index.ts';
import { startService } from '../../src/http/index.ts';
import type { Service } from '../../src/http/index.ts';

export const CHROMIUM = '/usr/bin/chromium';
/** Why the browser tests are skipped, or null when they run (named in the describe so a skip is never silent). */
export const NO_BROWSER = existsSync(CHROMIUM) ? null : `${CHROMIUM} is missing (apt-get install chromium)`;

/** Builds the console from console/ with its own Vite config into `outDir` (what `npm run build` does). */
export async function buildConsole(outDir: string): Promise<void> {
  await build({
    configFile: join(import.meta.dirname, '../../console/vite.config.ts'),
    logLevel: 'error',
    build: { outDir, emptyOutDir: true },
  });
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(new Error('aborted'));
    });
  });

export const consoleTools = [
  defineTool({
    name: 'pay',
    description: 'Pays an amount; over 100 needs approval.',
    input: z.object({ to: z.string(), amount: z.number() }),
    effect: 'unsafe',
    requiresApproval: (a) => (a as { amount: number }).amount > 100,
    execute: ({ to, amount }: { to: string; amount: number }) => `paid ${amount} to ${to}`,
  }),
  defineTool({
    name: 'wait',
    description: 'Waits `ms` milliseconds.',
    input: z.object({ ms: z.number() }),
    effect: 'read',
    execute: async ({ ms }: { ms: number }, ctx) => {
      await sleep(ms, ctx.signal);
      return ms;
    },
  }),
];

export interface ConsoleFixture {
  readonly service: Service;
  readonly browser: Browser;
  /** `http://127.0.0.1:port`. */
  readonly base: string;
  /** The service's SQLite file. */
  readonly path: string;
  /** A new member key of `tenant`. */
  key(tenant: string): Promise<string>;
  /** Runs `fn` on a fresh page (its own context: its own sessionStorage); saves a screenshot if it throws. */
  withPage(name: string, fn: (page: Page) => Promise<void>): Promise<void>;
  /** Calls the API with a key (test set-up and checks beside the browser). */
  api<T>(key: string, method: 'GET' | 'POST', path: string, body?: unknown): Promise<T>;
}

export interface ConsoleFixtureOptions {
  readonly python?: boolean;
  /** The model of instruction tasks: an OpenAI-compatible base URL, read when the service starts. */
  readonly modelUrl?: () => string;
  /** Serve with --insecure-no-auth (no keys checked). */
  readonly noAuth?: boolean;
  /** More `serve` flags by config key (e.g. `{ approvalTtlSeconds: '3600' }`). */
  readonly flags?: Readonly<Record<string, string | boolean>>;
  /** More tools besides `consoleTools`. */
  readonly tools?: readonly ToolDefinition[];
}

export function useConsoleFixture(name: string, options: ConsoleFixtureOptions = {}): ConsoleFixture {
  const fx = {} as { service: Service; browser: Browser; dir: string };
  beforeAll(async () => {
    fx.dir = await mkdtemp(join(tmpdir(), `codecall-${name}-`));
    const root = join(fx.dir, 'console');
    await buildConsole(root);
    const config = loadConfig({
      env: {},
      flags: {
        port: '0',
        db: join(fx.dir, 'tasks.db'),
        python: options.python ?? false,
        pythonWarm: '0',
        ...(options.noAuth ? { insecureNoAuth: true } : {}),
        ...options.flags,
      },
    });
    const model = options.modelUrl
      ? { provider: 'openai' as const, baseUrl: options.modelUrl(), model: 'scripted', apiKey: 'k' }
      : null;
    fx.service = await startService(config, {
      log: () => undefined,
      tools: [...consoleTools, ...(options.tools ?? [])],
      console: { root },
      model,
    });
    fx.browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
  }, 60_000);
  afterAll(async () => {
    await fx.browser?.close();
    await fx.service?.close();
    if (fx.dir) await rm(fx.dir, { recursive: true, force: true });
  });
  return {
    get service() {
      return fx.service;
    },
    get browser() {
      return fx.browser;
    },
    get base() {
      return fx.service.address;
    },
    get path() {
      return join(fx.dir, 'tasks.db');
    },
    async key(tenant) {
      const key = newApiKey();
      await fx.service.store.createApiKey({ ...key, tenant, role: 'member', name: `test ${tenant}` });
      return key.key;
    },
    async withPage(testName, fn) {
      const context = await fx.browser.newContext({ acceptDownloads: true });
      const page = await context.newPage();
      page.setDefaultTimeout(10_000);
      try {
        await fn(page);
      } catch (e) {
        const dir = join(import.meta.dirname, '../../test-results/console');
        await mkdir(dir, { recursive: true });
        const file = join(dir, `${testName.replace(/[^A-Za-z0-9_-]+/g, '-')}.png`);
        await page.screenshot({ path: file, fullPage: true }).catch(() => undefined);
        if (e instanceof Error) e.message += `\n(screenshot: ${file})`;
        throw e;
      } finally {
        await context.close();
      }
    },
    async api<T>(key: string, method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
      const res = await fetch(`${fx.service.address}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${key}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const json = (await res.json()) as T;
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
      return json;
    },
  };
}

/** Signs in on the console's page with a key and waits for the task list. */
export async function signIn(page: Page, base: string, key: string): Promise<void> {
  await page.goto(`${base}/`);
  await page.getByTestId('api-key').fill(key);
  await page.getByTestId('sign-in').click();
  await page.getByTestId('task-table').waitFor();
}

/** Errors the page logged (a CSP violation is one): a test fails on any. */
export function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  return errors;
}
