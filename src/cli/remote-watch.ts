import { inspect } from 'node:util';
import type { CodecallClient, StreamEvent, TaskEvent } from '../client/index.ts';
import { decodeValue, toJsonView } from '../codec/index.ts';
import { CodecallError } from '../errors/index.ts';
import { isTerminal } from '../spec/index.ts';
import type { CliIo } from './cli-io.ts';
import type { TaskView } from '../api/index.ts';

/** How often a watch also reads the task, in case the stream missed its end (or the server went away). */
export const WATCH_POLL_MS = 2000;

export interface WatchOptions {
  readonly client: CodecallClient;
  readonly taskId: string;
  /** Print one JSON line per event instead of text. */
  readonly json: boolean;
  /** Print nothing until the end (submit --wait --json). */
  readonly quiet?: boolean;
  /** For the hints printed at a pause. */
  readonly url: string;
  readonly signal?: AbortSignal;
}

/**
 * Follows a task's event stream until it ends, printing status changes, log lines, tool calls and progress as
 * they happen; resolves the terminal view. The stream is the fast path; a slow poll of the task covers an end
 * the stream did not deliver.
 */
export async function watchTask(options: WatchOptions, io: CliIo): Promise<TaskView> {
  const { client, taskId } = options;
  const out = (text: string): void => {
    if (!options.quiet) io.stdout(text);
  };
  const stop = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, stop.signal]) : stop.signal;
  let last: TaskView | null = null;
  const poll = setInterval(() => {
    client.get(taskId, { signal }).then(
      (view) => {
        if (isTerminal(view.status)) {
          last = view;
          stop.abort();
        }
      },
      () => undefined,
    );
  }, WATCH_POLL_MS);
  const printer = eventPrinter(options, out);
  try {
    for await (const event of client.stream(taskId, { signal })) {
      if (event.type === 'view' || event.type === 'status') last = event.view;
      // Entries written with a status change (a decision, a pause) come with the change, not as journal events;
      // and what happened before we connected is only in the journal: both are read from it.
      const behind = event.type === 'status' && event.view.progress.journal_entries > printer.seenSeq();
      if (behind && !options.json) {
        printer.print({
          type: 'journal',
          entries: await allEvents(client, taskId, printer.seenSeq(), signal),
        });
      }
      printer.print(event);
      if (event.type === 'view' && !options.json) {
        printer.print({ type: 'journal', entries: await allEvents(client, taskId, 0, signal) });
        if (event.view.status === 'paused') out(pauseText(event.view, options.url));
      }
      if (last !== null && isTerminal(last.status)) break;
    }
  } catch (e) {
    if (!stop.signal.aborted) throw e;
  } finally {
    clearInterval(poll);
    stop.abort();
  }
  const end: TaskView = last !== null && isTerminal(last.status) ? last : await client.get(taskId);
  if (!isTerminal(end.status)) {
    throw new CodecallError(
      'SERVICE_UNREACHABLE',
      `the event stream closed while task ${taskId} is ${end.status}`,
    );
  }
  if (!options.json) out(endText(end));
  return end;
}

async function allEvents(
  client: CodecallClient,
  taskId: string,
  from: number,
  signal: AbortSignal,
): Promise<TaskEvent[]> {
  const events: TaskEvent[] = [];
  let after = from;
  for (;;) {
    const page = await client.events(taskId, { after, limit: 1000 }, { signal });
    events.push(...page.events);
    if (page.next_after === null) return events;
    after = page.next_after;
  }
}

interface EventPrinter {
  print(event: StreamEvent): void;
  /** The last journal seq printed. */
  seenSeq(): number;
}

function eventPrinter(options: WatchOptions, out: (text: string) => void): EventPrinter {
  const tools = new Map<string, string>();
  let calls = 0;
  let seenSeq = 0;
  let lastStatus = '';
  let lastProgress = '';
  const progress = (entries: number): void => {
    const line = `progress  ${calls} tool calls completed, ${entries} journal entries\n`;
    if (line !== lastProgress) out(line);
    lastProgress = line;
  };
  const print = (event: StreamEvent): void => {
    if (options.json) {
      out(`${JSON.stringify(event)}\n`);
      return;
    }
    switch (event.type) {
      case 'view':
      case 'status': {
        const v = event.view;
        // The first view is followed by the journal so far, which counts the calls itself.
        if (event.type === 'status') calls = v.progress.tool_calls_completed;
        const status = `${v.status}${v.pause_reason === null ? '' : ` (${v.pause_reason})`}`;
        if (event.type === 'view') out(`task      ${v.task_id} ${status}\n`);
        else if (status !== lastStatus) out(`status    ${status}\n`);
        lastStatus = status;
        if (event.type === 'status') {
          if (v.status === 'paused') out(pauseText(v, options.url));
          progress(v.progress.journal_entries);
        }
        return;
      }
      case 'log':
        out(`log       ${event.level === 'log' ? '' : `[${event.level}] `}${event.message}\n`);
        return;
      case 'journal': {
        let outcomes = 0;
        // The backfill and the live entries can overlap: each seq is printed once.
        for (const e of event.entries.filter((x) => x.seq > seenSeq)) {
          seenSeq = e.seq;
          const line = entryText(e, tools);
          if (e.type === 'tool_outcome') outcomes++;
          if (line) out(line);
        }
        if (outcomes > 0) {
          calls += outcomes;
          progress(seenSeq);
        }
      }
    }
  };
  return { print, seenSeq: () => seenSeq };
}

function entryText(e: TaskEvent, tools: Map<string, string>): string | null {
  const d = e.data;
  switch (e.type) {
    case 'tool_intent':
      tools.set(String(d.call_id), String(d.tool));
      return `call      ${String(d.tool)}(${shown(d.args)})\n`;
    case 'tool_outcome':
      return `${d.ok ? 'done' : 'error'}      ${tools.get(String(d.call_id)) ?? String(d.call_id)}\n`;
    case 'approval_request':
      return `approval  ${String(d.approval_id)} requested for ${String(d.tool)}(${shown(d.args)})\n`;
    case 'approval_decision':
      return `decision  ${String(d.approval_id)} ${String(d.decision)} by ${String(d.actor)}\n`;
    case 'input_request':
      return `input     waiting for "${String(d.name)}"\n`;
    case 'input_provided':
      return `input     "${String(d.name)}" provided by ${String(d.actor)}\n`;
    case 'control':
      // Those without an actor are the runner's own bookkeeping (attempts, approved calls started).
      if (d.actor === undefined) return null;
      return `control   ${String(d.action)} by ${typeof d.actor === 'string' ? d.actor : JSON.stringify(d.actor)}${
        typeof d.reason === 'string' ? `: ${d.reason}` : ''
      }\n`;
    default:
      return null;
  }
}

/** Tool arguments cross the sandbox as tagged JSON; shown as plain JSON, cut short. */
function shown(args: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(toJsonView(decodeValue(String(args))));
  } catch {
    text = String(args);
  }
  return text.length > 200 ? `${text.slice(0, 200)}...` : text;
}

function pauseText(v: TaskView, url: string): string {
  const at = `--url ${url}`;
  const lines = [
    ...v.pending_approvals.map(
      (a) =>
        `approval  ${a.id}: ${a.tool}(${JSON.stringify(a.arguments)}); decide with: ` +
        `codecall tasks approve|reject ${v.task_id} ${a.id} ${at}`,
    ),
    ...v.pending_inputs.map(
      (i) => `input     "${i.name}"; answer with: codecall tasks input ${v.task_id} ${i.name} JSON ${at}`,
    ),
  ];
  if (v.resumable) lines.push(`resume    codecall tasks resume ${v.task_id} ${at}`);
  return lines.map((l) => `${l}\n`).join('');
}

function endText(v: TaskView): string {
  if (v.status === 'succeeded')
    return `result    ${inspect(v.result?.output, { depth: 8, colors: false })}\n`;
  return v.error ? `error     ${v.error.code}: ${v.error.message}\n` : '';
}
