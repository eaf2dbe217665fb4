import { decodeValue, toJsonView } from '../codec/index.ts';
import type { JournalEntry, LogEntry } from '../spec/index.ts';
import type { StepView } from '../api/index.ts';

type Mutable = { -readonly [K in keyof StepView]: StepView[K] };

function payload(text: unknown): unknown {
  if (typeof text !== 'string') return null;
  try {
    return toJsonView(decodeValue(text));
  } catch {
    return text;
  }
}

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
    const d = e.data;
    const n = typeof d.step === 'number' ? d.step : typeof d.block === 'number' ? d.block : 0;
    if (e.type === 'model_request') {
      at(n);
      current = null;
    } else if (e.type === 'model_reply') {
      const s = at(n);
      s.reply = typeof d.content === 'string' ? d.content : null;
      s.model = typeof d.model === 'string' ? d.model : null;
      const u = d.usage as { promptTokens?: number; completionTokens?: number } | undefined;
      s.usage = u ? { prompt_tokens: u.promptTokens ?? 0, completion_tokens: u.completionTokens ?? 0 } : null;
    } else if (e.type === 'code_block') {
      current = at(n);
      current.code = typeof d.code === 'string' ? d.code : null;
    } else if (e.type === 'step_result') {
      const s = at(n);
      s.ok = d.ok === true;
      s.final = d.final === true;
      s.output = Array.isArray(d.logs) ? (d.logs as LogEntry[]) : [];
      s.value = payload(d.output);
      s.error = d.error ?? null;
      current = null;
    } else if (e.type === 'tool_intent' && current) {
      const call = { call_id: String(d.call_id), tool: String(d.tool), arguments: payload(d.args), ok: null };
      calls.set(call.call_id, call);
      current.tool_calls = [...current.tool_calls, call];
    } else if (e.type === 'tool_outcome') {
      const call = calls.get(String(d.call_id));
      if (call) {
        call.ok = d.ok === true;
        if (call.ok) Object.assign(call, { result: payload(d.payload) });
        else
          Object.assign(call, {
            error: typeof d.payload === 'string' ? (JSON.parse(d.payload) as unknown) : d.payload,
          });
      }
    }
  }
  return [...steps.values()].sort((a, b) => a.step - b.step);
}
