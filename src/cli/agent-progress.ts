import { decodeValue, toJsonView } from '../codec/index.ts';
import type { RuntimeEvent } from '../api/index.ts';

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
      const d = e.data;
      switch (e.type) {
        case 'model_request':
          write(`step ${String(d.step)}: asking the model`);
          break;
        case 'model_reply': {
          const calls = Array.isArray(d.tool_calls)
            ? (d.tool_calls as { name: string; arguments: string }[])
            : [];
          const usage = d.usage as { promptTokens?: number; completionTokens?: number } | undefined;
          const tokens = usage
            ? ` (${usage.promptTokens ?? 0} prompt + ${usage.completionTokens ?? 0} completion tokens)`
            : '';
          write(`step ${String(d.step)}: ${String(d.model)} replied${tokens}`);
          if (typeof d.content === 'string' && d.content.trim() !== '') write(indent(d.content.trim()));
          for (const c of calls) write(`  calls ${c.name}(${short(c.arguments)})`);
          break;
        }
        case 'tool_intent':
          started.set(String(d.call_id), { tool: String(d.tool), at: performance.now() });
          write(`  -> ${String(d.tool)}(${short(decoded(d.args))})`);
          break;
        case 'tool_outcome': {
          const call = started.get(String(d.call_id));
          const ms = call ? ` ${Math.round(performance.now() - call.at)} ms` : '';
          const what = d.ok === true ? short(decoded(d.payload)) : `error ${short(d.payload)}`;
          write(`  <- ${call?.tool ?? String(d.call_id)}${ms}: ${what}`);
          break;
        }
        case 'approval_request':
          write(`  waiting for approval of ${String(d.tool)} (approval ${String(d.approval_id)})`);
          break;
        case 'step_result': {
          const error = d.error as { code?: string; message?: string; line?: number } | null;
          if (d.ok === true)
            write(
              `step ${String(d.step)}: ok${d.final === true ? ' (final answer)' : ''}, value ${short(decoded(d.output))}`,
            );
          else {
            const line = error?.line === undefined ? '' : ` at line ${error.line}`;
            write(`step ${String(d.step)}: failed${line}: ${error?.code ?? ''} ${error?.message ?? ''}`);
          }
          break;
        }
        default:
          break;
      }
    }
  };
}
