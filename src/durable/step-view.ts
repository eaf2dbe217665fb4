import type { JournalEntry, ModelUsage } from '../spec/index.ts';
import type { StepView } from '../api/index.ts';
import { originView } from './revision-view.ts';
import { viewValue as payload } from './view-value.ts';

type Mutable = { -readonly [K in keyof StepView]: StepView[K] };

/** The steps of an agent task's journal, oldest first; the tool calls of a step are those journaled in it. */
export function stepsView(journal: readonly JournalEntry[]): StepView[] {
  const steps = new Map<number, Mutable>();
  const at = (n: number): Mutable => {
    let s = steps.get(n);
    if (!s) {
      s = {
        step: n,
        reply: null,
        code: null,
        tool_calls: [],
        ok: null,
        final: false,
        output: [],
        value: null,
        error: null,
        model: null,
        usage: null,
      };
      steps.set(n, s);
    }
    return s;
  };
  let current: Mutable | null = null;
  const calls = new Map<string, StepView['tool_calls'][number] & { ok: boolean | null }>();
  for (const e of journal) {
    if (e.type === 'model_request') {
      at(e.data.step);
      current = null;
    } else if (e.type === 'model_reply') {
      const d = e.data;
      const s = at(d.step);
      s.reply = d.content;
      s.model = d.model ?? null;
      const u = d.usage as Partial<ModelUsage> | undefined;
      s.usage = u ? { prompt_tokens: u.promptTokens ?? 0, completion_tokens: u.completionTokens ?? 0 } : null;
    } else if (e.type === 'code_block') {
      current = at(e.data.block);
      current.code = e.data.code ?? null;
    } else if (e.type === 'step_result') {
      const d = e.data;
      const s = at(d.step);
      s.ok = d.ok;
      s.final = d.final;
      s.output = d.logs;
      s.value = payload(d.output);
      s.error = d.error;
      current = null;
    } else if (e.type === 'tool_intent' && current) {
      const d = e.data;
      const call = {
        call_id: d.call_id,
        tool: d.tool,
        arguments: payload(d.args),
        ...(d.carried_from ? { carried_from: originView(d.carried_from) } : {}),
        ok: null,
      };
      calls.set(call.call_id, call);
      current.tool_calls = [...current.tool_calls, call];
    } else if (e.type === 'tool_outcome') {
      const call = calls.get(e.data.call_id);
      if (call) {
        call.ok = e.data.ok;
        if (call.ok) Object.assign(call, { result: payload(e.data.payload) });
        else Object.assign(call, { error: JSON.parse(e.data.payload) as unknown });
      }
    }
  }
  return [...steps.values()].sort((a, b) => a.step - b.step);
}
