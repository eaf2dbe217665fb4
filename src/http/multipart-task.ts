import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { CodecallError } from '../errors/index.ts';
import { jsonDepthError } from './json-body.ts';

/**
 * POST /api/v1/tasks also takes multipart/form-data: a `task` field with the JSON body, and file parts that
 * become the task's input files under their file names (after any `files` the JSON names).
 */
export function registerMultipart(app: FastifyInstance, bodyLimit: number): void {
  // busboy's limits are per part: the whole body's is kept by readParts (Fastify's bodyLimit skips multipart).
  void app.register(multipart, {
    limits: { fileSize: bodyLimit, fieldSize: bodyLimit, files: 1000, fields: 10, parts: 1010 },
  });
}

export async function multipartTaskBody(request: FastifyRequest): Promise<unknown> {
  // The route's bodyLimit (the server's unless the route sets one): what a JSON body may hold.
  const limit = request.routeOptions.bodyLimit;
  const declared = Number(request.headers['content-length']);
  try {
    if (declared > limit) throw tooLarge(limit);
    return await readParts(request, limit);
  } catch (e) {
    throw malformed(e);
  }
}

function tooLarge(limit: number): CodecallError {
  return new CodecallError('PAYLOAD_TOO_LARGE', `multipart body: over the body limit of ${limit} bytes`, {
    details: { field: 'body', limit },
  });
}

/**
 * busboy's and @fastify/multipart's errors (no boundary, a truncated body, a wrong boundary, a limit) are plain
 * Errors that would answer 500: the client sent them, so they are 400 (413 for a limit) in the envelope.
 */
function malformed(e: unknown): CodecallError {
  if (e instanceof CodecallError) return e;
  const error = e as { statusCode?: number; message?: string; code?: string };
  if (error.statusCode === 413) {
    return new CodecallError('PAYLOAD_TOO_LARGE', `multipart body: ${error.message ?? 'too large'}`, {
      details: { field: 'body' },
    });
  }
  return new CodecallError(
    'BAD_REQUEST',
    `malformed multipart body: ${error.message ?? 'unreadable'} (send multipart/form-data with its boundary)`,
    { details: { field: 'body' } },
  );
}

async function readParts(request: FastifyRequest, limit: number): Promise<unknown> {
  let task: Record<string, unknown> | null = null;
  const files: { name: string; content_base64: string }[] = [];
  // The parts' bytes together, against the body limit as they arrive: each part alone may be under it.
  let used = 0;
  const take = (n: number): void => {
    used += n;
    if (used > limit) throw tooLarge(limit);
  };
  for await (const part of request.parts()) {
    if (part.type === 'file') {
      const chunks: Buffer[] = [];
      for await (const chunk of part.file as AsyncIterable<Buffer>) {
        take(chunk.length);
        chunks.push(chunk);
      }
      if (part.file.truncated) throw tooLarge(limit);
      files.push({ name: part.filename, content_base64: Buffer.concat(chunks).toString('base64') });
    } else if (part.fieldname === 'task') {
      if (task !== null) throw bad('task', 'given twice: send one "task" field');
      take(Buffer.byteLength(String(part.value)));
      if (part.valueTruncated) throw tooLarge(limit);
      const deep = jsonDepthError(String(part.value), 'task');
      if (deep) throw deep;
      try {
        task = JSON.parse(String(part.value)) as Record<string, unknown>;
      } catch {
        throw bad('task', 'the task field must be the task as JSON');
      }
      if (task === null || typeof task !== 'object' || Array.isArray(task))
        throw bad('task', 'must be a JSON object');
    } else {
      throw bad(
        part.fieldname,
        'unknown form field: send the task as the "task" field and files as file parts',
      );
    }
  }
  if (!task) throw bad('task', 'a multipart task needs a "task" field with the task as JSON');
  const listed = Array.isArray(task.files) ? (task.files as unknown[]) : [];
  return files.length > 0 ? { ...task, files: [...listed, ...files] } : task;
}

function bad(field: string, message: string): CodecallError {
  return new CodecallError('BAD_REQUEST', `${field}: ${message}`, { details: { field } });
}
