import type { Command } from 'commander';
import { collect } from './repeatable.ts';
import { CodecallError, isCodecallError } from '../errors/index.ts';
import { checkTaskBudgets } from '../spec/index.ts';
import type { TaskBudgets, ToolBudget } from '../spec/index.ts';

/** The budget flags of `exec`, `run` and `tasks submit` (ADR 0044), as commander gives them. */
export interface BudgetOptions {
  maxCalls?: string;
  maxCost?: string;
  /** `TOOL=N`, repeatable. */
  toolMaxCalls?: string[];
  /** `TOOL=S`, repeatable. */
  toolMaxSeconds?: string[];
}

/** Adds the budget flags to a command that submits a task (they map to `tool_constraints.budgets`). */
export function addBudgetOptions(command: Command): Command {
  return command
    .option(
      '--max-calls <n>',
      'budget: tool calls of all tools together in the task (a whole number, 0 or more)',
    )
    .option(
      '--max-cost <n>',
      "budget: the sum of the calls' costs (a tool's call costs 1 unless it declares a cost)",
    )
    .option(
      '--tool-max-calls <tool=n>',
      'budget: calls of one tool, named as the program calls it (tools.search=5; repeatable)',
      collect,
      [],
    )
    .option(
      '--tool-max-seconds <tool=s>',
      "budget: seconds one tool's completed calls may take together (tools.search=60; repeatable)",
      collect,
      [],
    );
}

function bad(message: string): never {
  throw new CodecallError('INVALID_ARGUMENT', message);
}

/** A flag's number: a whole one for counts, any finite one for amounts; 0 or more. */
function numberOf(flag: string, text: string, whole: boolean): number {
  const n = text.trim() === '' ? Number.NaN : Number(text);
  const ok = whole ? Number.isSafeInteger(n) : Number.isFinite(n);
  if (!ok || n < 0) bad(`${flag} must be ${whole ? 'an integer' : 'a number'} of 0 or more, not "${text}"`);
  return n;
}

/** `TOOL=N` entries into `tools`, each tool once per flag. */
function addTools(
  tools: Record<string, { maxCalls?: number; maxWallSeconds?: number }>,
  flag: string,
  entries: readonly string[],
  key: keyof ToolBudget,
): void {
  const seen = new Set<string>();
  for (const entry of entries) {
    const at = entry.lastIndexOf('=');
    if (at <= 0)
      bad(`${flag} must be TOOL=${key === 'maxCalls' ? 'N' : 'SECONDS'} (tools.search=5), not "${entry}"`);
    const tool = entry.slice(0, at).trim();
    if (seen.has(tool)) bad(`${flag} names ${tool} twice`);
    seen.add(tool);
    const value = numberOf(`${flag} ${tool}`, entry.slice(at + 1), key === 'maxCalls');
    // The tool's name is checked as a submission's is, and its refusal said in the flag's words.
    try {
      checkTaskBudgets({ tools: { [tool]: { [key]: value } } }, 'budget');
    } catch (e) {
      if (!isCodecallError(e)) throw e;
      bad(`${flag} ${entry}: ${e.message.replace(/^budget\.tools\[[^\]]*\] /, '')}`);
    }
    tools[tool] = { ...tools[tool], [key]: value };
  }
}

/** The task's budgets from the flags (runtime form, checked); null when none is given. */
export function budgetsOf(options: BudgetOptions): TaskBudgets | null {
  const tools: Record<string, { maxCalls?: number; maxWallSeconds?: number }> = {};
  addTools(tools, '--tool-max-calls', options.toolMaxCalls ?? [], 'maxCalls');
  addTools(tools, '--tool-max-seconds', options.toolMaxSeconds ?? [], 'maxWallSeconds');
  const budgets = {
    ...(options.maxCalls === undefined ? {} : { maxCalls: numberOf('--max-calls', options.maxCalls, true) }),
    ...(options.maxCost === undefined ? {} : { maxCost: numberOf('--max-cost', options.maxCost, false) }),
    ...(Object.keys(tools).length === 0 ? {} : { tools }),
  };
  return checkTaskBudgets(budgets);
}
