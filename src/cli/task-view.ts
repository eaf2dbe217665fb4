import { inspect } from 'node:util';
import type { CorruptTaskItem, TaskView } from '../api/index.ts';
import { rememberedTools } from './remembered-tools.ts';

/** One line per task for `tasks list`. */
export function taskLine(view: Pick<TaskView, 'task_id' | 'status' | 'pause_reason' | 'created_at'>): string {
  const reason = view.pause_reason === null ? '' : ` (${view.pause_reason})`;
  return `${view.task_id}  ${view.status}${reason}  ${view.created_at}`;
}

/** The line `tasks list` writes (to stderr) for a task it skipped because the store cannot read it. */
export function corruptLine(item: CorruptTaskItem): string {
  return `${item.task_id}  ${item.status}  corrupt (${item.code}): ${item.message}`;
}

/** Human-readable `tasks show`. */
export function taskDetailText(view: TaskView): string {
  const tools = rememberedTools(view.metadata);
  const lines = [
    `id:          ${view.task_id}`,
    `status:      ${view.status}${view.pause_reason === null ? '' : ` (${view.pause_reason})`}`,
    `language:    ${view.language}`,
    `attempts:    ${view.attempts}`,
    `created:     ${view.created_at}`,
    `updated:     ${view.updated_at}`,
    `checkpoint:  ${view.checkpoint_id ?? '-'}`,
    ...(tools === null ? [] : [`tools:       ${tools} (the module it was started with)`]),
    `progress:    ${view.progress.tool_calls_completed} tool calls completed, ${view.progress.journal_entries} journal entries`,
  ];
  if (view.instruction !== null) {
    lines.splice(3, 0, `mode:        ${view.mode ?? 'code'}`, `instruction: ${view.instruction}`);
    for (const s of view.steps ?? []) {
      const how = s.ok === null ? 'running' : s.ok ? (s.final ? 'ok (final answer)' : 'ok') : 'failed';
      lines.push(
        `step ${s.step}:      ${how}, ${s.tool_calls.length} tool calls${s.model ? `, ${s.model}` : ''}`,
      );
      if (s.code !== null) lines.push(...s.code.split('\n').map((l) => `  | ${l}`));
      if (s.error !== null) lines.push(`  error: ${JSON.stringify(s.error)}`);
    }
  }
  for (const a of view.pending_approvals) {
    lines.push(`approval:    ${a.id} ${a.tool}(${JSON.stringify(a.arguments)})`);
  }
  for (const i of view.pending_inputs) {
    lines.push(`input:       "${i.name}"${i.deadline ? ` until ${i.deadline}` : ''}`);
  }
  for (const c of view.attention_calls) {
    lines.push(`attention:   ${c.call_id} ${c.tool}(${JSON.stringify(c.arguments)})`);
    if (c.earlier)
      lines.push(`  beside:    ${originText(c.earlier.origin)} ${callText(c.earlier)}, completed`);
  }
  // An older server sends no `revision`.
  const rev = (view as Partial<TaskView>).revision ?? null;
  if (rev !== null) {
    lines.push(
      `revision:    of ${rev.revision_of}${rev.rerun_reads ? ' (reads run again)' : ''}: ${rev.carried} of ${rev.offered} completed calls taken over`,
    );
    for (const c of rev.not_repeated) {
      lines.push(`  not repeated: ${originText(c.origin)} ${callText(c)} (already executed)`);
    }
  }
  const by = view.revised_by;
  if (by !== undefined && by.total > 0) {
    const more = by.total > by.task_ids.length ? ` (the newest ${by.task_ids.length} of ${by.total})` : '';
    lines.push(`revised by:  ${by.task_ids.join(', ')}${more}`);
  }
  if (view.error !== null)
    lines.push(`error:       ${view.error.code}: ${view.error.message}${errorAt(view.error)}`);
  if (view.corrupt !== null) lines.push(`corrupt:     ${view.corrupt.code}: ${view.corrupt.message}`);
  if (view.result !== null) {
    const r = view.result.resources_used;
    lines.push(
      `resources:   ${r.cpu_time_s} s CPU, ${r.wall_time_s} s wall, ${r.memory_mb} MB, ${r.tool_calls} tool calls`,
    );
    if (view.status === 'succeeded') {
      lines.push(`result:      ${inspect(view.result.output, { depth: 8, colors: false })}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

function originText(o: { readonly task_id?: string; readonly call_id: string }): string {
  return o.task_id === undefined ? o.call_id : `${o.task_id}/${o.call_id}`;
}

function callText(c: { readonly tool: string; readonly arguments: unknown }): string {
  return `${c.tool}(${JSON.stringify(c.arguments)})`;
}

/** ` (line L, column C)` when the view says where the program failed. */
function errorAt(error: { line?: number; column?: number }): string {
  if (error.line === undefined) return '';
  return ` (line ${error.line}${error.column === undefined ? '' : `, column ${error.column}`})`;
}
