import { CodecallError } from '../errors/index.ts';
import { isRecord } from '../spec/is-record.ts';

/** A prompt's own tokens and log-probabilities, as `/completions` echoes them. */
export interface PromptLogprobs {
  /** The prompt's tokens in order (a token generated after it is cut off). */
  readonly tokens: readonly string[];
  /** Each token's natural-log probability given the ones before it; null where the server gives none (the first). */
  readonly logprobs: readonly (number | null)[];
  /** Where each token starts in the prompt, in UTF-16 code units (JavaScript string indices). */
  readonly offsets: readonly number[];
  /** The most likely tokens at each position with their log-probabilities; null where the server gives none. */
  readonly top: readonly (Readonly<Record<string, number>> | null)[];
}

/**
 * Reads a `/completions` reply to `echo: true, logprobs: N` for `prompt`: the legacy logprobs shape
 * `{ tokens, token_logprobs, text_offset, top_logprobs }` that OpenAI defined and vLLM and llama-cpp-python keep.
 * Anything else (no logprobs, arrays of different lengths, offsets out of order or past the text, an echo that is
 * not the prompt) is MODEL_BAD_REPLY: a score read from it would be wrong without saying so.
 */
export function parsePromptLogprobs(text: string, prompt: string): PromptLogprobs {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    throw badReply('the model server sent a body that is not JSON', text, error);
  }
  const choices = isRecord(body) ? body.choices : undefined;
  const first: unknown = Array.isArray(choices) ? choices[0] : undefined;
  if (!isRecord(first)) throw badReply('the completions reply has no choices', text);
  const lp = first.logprobs;
  if (!isRecord(lp)) {
    throw badReply(
      'the completions reply has no logprobs: the server does not echo the prompt with its log-probabilities',
      text,
    );
  }
  if (typeof first.text !== 'string' || !first.text.startsWith(prompt)) {
    throw badReply('the completions reply does not echo the prompt (echo: true)', text);
  }
  const { tokens, token_logprobs: logprobs, text_offset: offsets } = lp;
  if (!Array.isArray(tokens) || !Array.isArray(logprobs) || !Array.isArray(offsets)) {
    throw badReply('the logprobs lack tokens, token_logprobs or text_offset', text);
  }
  const n = tokens.length;
  const top = lp.top_logprobs ?? null;
  if (
    logprobs.length !== n ||
    offsets.length !== n ||
    (top !== null && (!Array.isArray(top) || top.length !== n))
  ) {
    throw badReply(
      `the logprobs' arrays differ in length (tokens ${n}, token_logprobs ${logprobs.length}, ` +
        `text_offset ${offsets.length}${Array.isArray(top) ? `, top_logprobs ${top.length}` : ''})`,
      text,
    );
  }
  const toUtf16 = codePointToUtf16(first.text);
  const out = {
    tokens: [] as string[],
    logprobs: [] as (number | null)[],
    offsets: [] as number[],
    top: [] as (Record<string, number> | null)[],
  };
  let previous = 0;
  for (let i = 0; i < n; i++) {
    const token: unknown = tokens[i];
    const logprob: unknown = logprobs[i];
    const offset: unknown = offsets[i];
    if (typeof token !== 'string') throw badReply(`token ${i} is not a string`, text);
    if (logprob !== null && (typeof logprob !== 'number' || !Number.isFinite(logprob))) {
      throw badReply(`token ${i}'s log-probability is not a number`, text);
    }
    if (typeof offset !== 'number' || !Number.isInteger(offset) || offset < previous) {
      throw badReply(`token ${i}'s text_offset is not an offset after the previous one`, text);
    }
    previous = offset;
    const at = toUtf16(offset);
    if (at === undefined) throw badReply(`token ${i}'s text_offset is past the echoed text`, text);
    // The echo ends where the prompt does: what follows was generated (max_tokens) and is not scored.
    if (at >= prompt.length) continue;
    out.tokens.push(token);
    out.logprobs.push(logprob);
    out.offsets.push(at);
    out.top.push(top === null ? null : topOf((top as unknown[])[i], i, text));
  }
  if (prompt !== '' && out.tokens.length === 0) throw badReply('the reply has no tokens of the prompt', text);
  return out;
}

function topOf(value: unknown, i: number, text: string): Record<string, number> | null {
  if (value === null || value === undefined) return null;
  if (!isRecord(value)) throw badReply(`top_logprobs ${i} is not an object`, text);
  const entries: Record<string, number> = {};
  for (const [token, logprob] of Object.entries(value)) {
    if (typeof logprob !== 'number' || !Number.isFinite(logprob)) {
      throw badReply(`top_logprobs ${i} holds a log-probability that is not a number`, text);
    }
    entries[token] = logprob;
  }
  return entries;
}

/**
 * text_offset counts characters the way the server's language does: Python's code points for vLLM and
 * llama-cpp-python. JavaScript strings count UTF-16 units, which differ past the BMP (an emoji is 2), so offsets
 * are mapped; undefined for one past the end of the text.
 */
function codePointToUtf16(text: string): (offset: number) => number | undefined {
  if (!/[\uD800-\uDFFF]/.test(text)) return (offset) => (offset <= text.length ? offset : undefined);
  const units: number[] = [];
  let unit = 0;
  for (const char of text) {
    units.push(unit);
    unit += char.length;
  }
  units.push(unit);
  return (offset) => units[offset];
}

function badReply(message: string, text: string, cause?: unknown): CodecallError {
  return new CodecallError('MODEL_BAD_REPLY', message, { details: { body: text.slice(0, 500) }, cause });
}
