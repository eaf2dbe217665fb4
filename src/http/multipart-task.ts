import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { CodecallError } from '../errors/index.ts';

/**
 * POST /api/v1/tasks also takes multipart/form-data: a `task` field with the JSON body, and file parts that
 * become the task's input files under their file names (after any `files` the JSON names).
 */
export function registerMultipart(app: FastifyInstance, bodyLimit: number): void {
  void app.register(multipart, { limits: { fileSize: bodyLimit, files: 1000, fields: 10, parts: 1010 } });
}

export async function multipartTaskBody(request: FastifyRequest): Promise<unknown> {
  let task: Record<string, unknown> | null = null;
  const files: { name: string; content_base64: string }[] = [];
  for await (const part of request.parts()) {
    if (part.type === 'file') {
      const data = await part.toBuffer();
      files.push({ name: part.filename, content_base64: data.toString('base64') });
    } else if (part.fieldname === 'task') {
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
