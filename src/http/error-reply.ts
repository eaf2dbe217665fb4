import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { httpStatusFor, isCodecallError } from '../errors/index.ts';

/** Every error body is `{ error: { code, message, details } }`; bad input is never a 500. */
export function sendError(
  reply: FastifyReply,
  status: number,
  code: string,
  message: string,
  details: Record<string, unknown> = {},
): FastifyReply {
  return reply.status(status).send({ error: { code, message, details } });
}

/** Maps what a route threw (CodecallError, fastify's validation and parsing errors) to the envelope. */
export function errorHandler(
  error: FastifyError,
  _request: FastifyRequest,
  reply: FastifyReply,
): FastifyReply {
  if (isCodecallError(error)) {
    if (error.code === 'UNAUTHORIZED') void reply.header('www-authenticate', 'Bearer');
    return sendError(reply, httpStatusFor(error.code), error.code, error.message, error.details);
  }
  if (error.validation) {
    const first = error.validation[0];
    const at = fieldName(`${error.validationContext ?? 'body'}${first?.instancePath ?? ''}`);
    const params = first?.params as { missingProperty?: string; additionalProperty?: string } | undefined;
    const named = params?.missingProperty ?? params?.additionalProperty;
    const field = (named === undefined ? at : at ? `${at}.${named}` : named) || 'body';
    return sendError(reply, 400, 'BAD_REQUEST', `${field}: ${first?.message ?? 'invalid'}`, {
      field,
    });
  }
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || error.statusCode === 413) {
    return sendError(reply, 413, 'PAYLOAD_TOO_LARGE', 'the request body is too large');
  }
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    // A path segment longer than any id: the same answer as an id the params schema refuses.
    return sendError(reply, 400, 'BAD_REQUEST', 'a path parameter is too long', { field: 'params' });
  }
  if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    return sendError(reply, 415, 'UNSUPPORTED_MEDIA_TYPE', 'send the body as application/json');
  }
  if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
    // Malformed JSON, an empty body where one is needed, ...
    return sendError(reply, error.statusCode, 'BAD_REQUEST', error.message);
  }
  return sendError(reply, 500, 'INTERNAL', 'internal error');
}

/** ajv's `body/tasks/3/language` as `tasks[3].language`, the style submit-body and the runtime name fields in. */
function fieldName(pointer: string): string {
  let field = '';
  for (const part of pointer.replace(/^body(\/|$)/, '').split('/')) {
    if (part === '') continue;
    field = /^[0-9]+$/.test(part) ? `${field}[${part}]` : field ? `${field}.${part}` : part;
  }
  return field;
}
