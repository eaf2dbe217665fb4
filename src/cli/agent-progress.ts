import { decodeValue, toJsonView } from '../codec/index.ts';
import type { RuntimeEvent } from '../api/index.ts';
import type { ModelUsage } from '../spec/index.ts';

const MAX_SHOWN = 400;

function short(value: unknown): string {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? 'undefined');
  return text.length <= MAX_SHOWN ? text : `${text.slice(0, MAX_SHOWN)}... (${text.length - MAX_SHOWN} more)`;
}

function decoded(payload: unknown): unknown {
  if (typeof payload !== 'string') return payload;
  try {
    return toJsonView(decodeValue(payload));
  } catch {
    return payload;
  }
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `  | ${line}`)
    .join('\n');
}

/**
 * Shows an agent task as it runs, from its journal entries and console lines: each step's code (or function
 * calls), every tool call with its arguments and outcome, and how the step ended. Lines go to `write` (stderr).
 */
export function agentProgress(write: (line: string) => void): (event: RuntimeEvent) => void {
  const started = new Map<string, { tool: string; at: number }>();
  return (event) => {
    if (event.type === 'log') {
      write(`  ${event.level === 'log' ? '' : `[${event.level}] `}${event.message}`);
      return;
    }
    if (event.type !== 'journal') return;
    for (const e of event.entries) {
      switch (e.type) {
        case 'model_request':
          write(`step ${e.data.step}: asking the model`);
          break;
        case 'model_reply': {
          const d = e.data;
          const usage = d.usage as Partial<ModelUsage> | undefined;
          const tokens = usage
            ? ` (${usage.promptTokens ?? 0} prompt + ${usage.completionTokens ?? 0} completion tokens)`
            : '';
          write(`step ${d.step}: ${String(d.model)} replied${tokens}`);
          if (typeof d.content === 'string' && d.content.trim() !== '') write(indent(d.content.trim()));
          for (const c of d.tool_calls) write(`  calls ${c.name}(${short(c.arguments)})`);
          break;
        }
        case 'tool_intent':
          started.set(e.data.call_id, { tool: e.data.tool, at: performance.now() });
          write(`  -> ${e.data.tool}(${short(decoded(e.data.args))})`);
          break;
        case 'tool_outcome': {
          const d = e.data;
          const call = started.get(d.call_id);
          const ms = call ? ` ${Math.round(performance.now() - call.at)} ms` : '';
          const what = d.ok ? short(decoded(d.payload)) : `error ${short(d.payload)}`;
          write(`  <- ${call?.tool ?? d.call_id}${ms}: ${what}`);
          break;
        }
        case 'approval_request':
          write(`  waiting for approval of ${e.data.tool} (approval ${e.data.approval_id})`);
          break;
        case 'step_result': {
          const d = e.data;
          const error = d.error;
          if (d.ok)
            write(`step ${d.step}: ok${d.final ? ' (final answer)' : ''}, value ${short(decoded(d.output))}`);
          else {
            const line = error?.line === undefined ? '' : ` at line ${error.line}`;
            write(`step ${d.step}: failed${line}: ${error?.code ?? ''} ${error?.message ?? ''}`);
          }
          break;
        }
        default:
          break;
      }
    }
  };
}
