import { extname } from 'node:path';
import type { ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import { CodecallError } from '../errors/index.ts';
import type { TaskBackend } from './task-backend.ts';

/** The resources a task offers (ADR 0049): its journal and the files its program left. */
export const RESOURCE_TEMPLATES = [
  {
    uriTemplate: 'codecall://tasks/{task_id}/journal',
    name: 'task-journal',
    title: "A task's journal",
    description:
      'The entries of the journal (tool intents and outcomes, approvals, decisions), oldest first, up to 1 MiB.',
    mimeType: 'application/json',
  },
  {
    uriTemplate: 'codecall://tasks/{task_id}/artifacts/{name}',
    name: 'task-artifact',
    title: "A file a task's program left",
    description: 'A file the program left in its working directory (text as text, other files as base64).',
  },
] as const;

/** The bytes of a journal resource at most, and of an artifact read through MCP (larger: the HTTP API). */
export const JOURNAL_RESOURCE_BYTES = 1024 * 1024;
export const MAX_ARTIFACT_RESOURCE_BYTES = 16 * 1024 * 1024;

const TEXT_TYPES: Readonly<Record<string, string>> = {
  '.txt': 'text/plain',
  '.md': 'text/markdown',
  '.csv': 'text/csv',
  '.json': 'application/json',
  '.html': 'text/html',
  '.svg': 'image/svg+xml',
  '.xml': 'application/xml',
  '.log': 'text/plain',
};
const BINARY_TYPES: Readonly<Record<string, string>> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.pdf': 'application/pdf',
  '.parquet': 'application/vnd.apache.parquet',
};

/** The mime type a file's name says, and whether it is read as text. */
export function artifactType(name: string): { mimeType: string; text: boolean } {
  const ext = extname(name).toLowerCase();
  const text = TEXT_TYPES[ext];
  if (text !== undefined) return { mimeType: text, text: true };
  return { mimeType: BINARY_TYPES[ext] ?? 'application/octet-stream', text: false };
}

const URI = /^codecall:\/\/tasks\/([^/]+)\/(journal|artifacts\/(.+))$/;

function notFound(uri: string, why: string): CodecallError {
  return new CodecallError('NOT_FOUND', `${why}: ${uri}`, { details: { uri } });
}

/** Reads one task resource for its caller: NOT_FOUND for a URI that names none (or another tenant's task). */
export async function readTaskResource(tasks: TaskBackend, uri: string): Promise<ReadResourceResult> {
  const m = URI.exec(uri);
  if (!m)
    throw notFound(uri, 'not a codecall task resource (codecall://tasks/ID/journal or /artifacts/NAME)');
  const taskId = decodeURIComponent(m[1] ?? '');
  if (m[2] === 'journal') {
    const { entries, more } = await tasks.journal(taskId, JOURNAL_RESOURCE_BYTES);
    return {
      contents: [
        {
          uri,
          mimeType: 'application/json',
          text: JSON.stringify({ task_id: taskId, entries, more }),
        },
      ],
    };
  }
  const name = decodeURIComponent(m[3] ?? '');
  const data = await tasks.artifact(taskId, name);
  if (!data) throw notFound(uri, `task ${taskId} has no artifact ${JSON.stringify(name)}`);
  if (data.byteLength > MAX_ARTIFACT_RESOURCE_BYTES) {
    throw new CodecallError(
      'PAYLOAD_TOO_LARGE',
      `artifact ${JSON.stringify(name)} is ${data.byteLength} bytes, over the ${MAX_ARTIFACT_RESOURCE_BYTES} an MCP read gives: GET /api/v1/tasks/${taskId}/artifacts/NAME`,
      { details: { uri, size: data.byteLength } },
    );
  }
  const { mimeType, text } = artifactType(name);
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return {
    contents: [
      text
        ? { uri, mimeType, text: bytes.toString('utf8') }
        : { uri, mimeType, blob: bytes.toString('base64') },
    ],
  };
}
