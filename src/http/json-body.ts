import type { FastifyInstance } from 'fastify';
import { CodecallError } from '../errors/index.ts';

/**
 * Deepest nesting of arrays and objects a JSON body may have. Values inside a body are checked to 100 levels
 * (codec/json-value.ts); the body's own levels come on top.
 */
export const MAX_JSON_DEPTH = 128;

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Whether the JSON text nests arrays/objects deeper than `max`, found in one pass over its characters (brackets
 * inside strings do not count), stopping at the first level over. Malformed text is left to JSON.parse.
 */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      for (i++; i < text.length; i++) {
        const s = text.charCodeAt(i);
        if (s === BACKSLASH) i++;
        else if (s === QUOTE) break;
      }
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > max) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}

/** JSON_TOO_DEEP for text nested deeper than MAX_JSON_DEPTH, else null. */
export function jsonDepthError(text: string, field = 'body'): CodecallError | null {
  if (!nestsDeeperThan(text, MAX_JSON_DEPTH)) return null;
  return new CodecallError(
    'JSON_TOO_DEEP',
    `${field}: JSON nested deeper than ${MAX_JSON_DEPTH} levels of arrays and objects`,
    { details: { field, max_depth: MAX_JSON_DEPTH } },
  );
}

/**
 * JSON bodies are scanned for their depth before they are parsed: a body of millions of `[` would otherwise cost
 * seconds of the event loop in parsing and in what walks the value after. Then fastify's own parser (its
 * `__proto__` / `constructor` checks included) parses them.
 */
export function registerJsonParser(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    const deep = jsonDepthError(text);
    if (deep) {
      done(deep, undefined);
      return;
    }
    void parse(request, text, done);
  });
}
