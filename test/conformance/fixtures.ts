import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import type { ToolContext, ToolDefinition } from '../../src/spec/index.ts';
import { defineTool } from '../../src/tools/index.ts';

/** Tools the cases share. Each factory returns a fresh tool, so a case can record what its tool saw. */

export interface ToolLog {
  args: unknown[];
  signals: AbortSignal[];
  callIds: string[];
  running: number;
  maxRunning: number;
}

export function newToolLog(): ToolLog {
  return { args: [], signals: [], callIds: [], running: 0, maxRunning: 0 };
}

function record(log: ToolLog | undefined, args: unknown, ctx: ToolContext): void {
  if (!log) return;
  log.args.push(args);
  log.signals.push(ctx.signal);
  log.callIds.push(ctx.callId);
}

/** `tools.sleep({ ms })` resolves to `ms` after that many milliseconds; counts how many run at once. */
export function sleepTool(log?: ToolLog): ToolDefinition {
  return defineTool({
    name: 'sleep',
    description: 'sleeps',
    input: { type: 'object', properties: { ms: { type: 'number' } }, required: ['ms'] },
    async execute(raw, ctx) {
      const args = raw as { ms: number; tag?: unknown };
      record(log, args, ctx);
      if (log) {
        log.running += 1;
        log.maxRunning = Math.max(log.maxRunning, log.running);
      }
      try {
        await sleep(args.ms, undefined, { signal: ctx.signal });
      } finally {
        if (log) log.running -= 1;
      }
      return args.tag ?? args.ms;
    },
  });
}

/** `tools.get_weather({ city })` with a strict input schema. */
export function weatherTool(log?: ToolLog): ToolDefinition {
  return defineTool({
    name: 'get_weather',
    description: 'weather for a city',
    input: {
      type: 'object',
      properties: { city: { type: 'string' } },
      required: ['city'],
      additionalProperties: false,
    },
    execute(args, ctx) {
      record(log, args, ctx);
      return { city: args.city as string, tempC: 21, sky: 'clear' };
    },
  });
}

/** `tools.order({ quantity })` validated by a zod schema. */
export function zodTool(log?: ToolLog): ToolDefinition {
  return defineTool({
    name: 'order',
    description: 'orders',
    input: z.object({ quantity: z.number().int() }),
    execute(args, ctx) {
      record(log, args, ctx);
      return { ordered: args.quantity };
    },
  });
}

/** `tools.echo(args)` returns its arguments; accepts anything. */
export function echoTool(log?: ToolLog, name = 'echo'): ToolDefinition {
  return defineTool({
    name,
    description: 'echoes',
    input: {},
    execute(args, ctx) {
      record(log, args, ctx);
      return args;
    },
  });
}

/** `tools.boom()` throws an Error with code E_BOOM. */
export function boomTool(): ToolDefinition {
  return defineTool({
    name: 'boom',
    description: 'fails',
    execute() {
      throw Object.assign(new Error('boom'), { code: 'E_BOOM' });
    },
  });
}

/** `tools.hang()` never returns; it settles only when its signal is aborted. */
export function hangTool(log?: ToolLog): ToolDefinition {
  return defineTool({
    name: 'hang',
    description: 'never returns',
    execute(args, ctx) {
      record(log, args, ctx);
      return new Promise((_resolve, reject) => {
        ctx.signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
      });
    },
  });
}

/** `tools.<name>()` returns whatever `produce` gives, unchecked. */
export function valueTool(name: string, produce: () => unknown): ToolDefinition {
  return defineTool({ name, description: 'returns a fixed value', execute: () => produce() });
}
