// A bigram language model over whitespace-delimited tokens, estimated on a fixed text: small enough that the
// log-probability of any token, and so the Toolformer losses, can be worked out by hand from its counts.

/** Tokens as `\s*\S+` (a word with the spaces before it), plus trailing spaces; `[...spans]` cover the text. */
export function tokenize(text: string): { token: string; start: number }[] {
  return [...text.matchAll(/\s*\S+|\s+$/g)].map((m) => ({ token: m[0], start: m.index }));
}

export const UNKNOWN = '<unk>';

export interface BigramModel {
  /** Distinct tokens of the text, plus <unk>. */
  readonly vocabulary: readonly string[];
  /** c(a, b): how often b follows a in the text. */
  pairCount(a: string, b: string): number;
  /** c(a): how often a is followed by anything. */
  leftCount(a: string): number;
  /** ln P(b | a) = ln((c(a, b) + k) / (c(a) + k V)), unknown tokens read as <unk>. */
  logprob(a: string, b: string): number;
  /** The n likeliest next tokens after a, likeliest first (ties by token). */
  top(a: string, n: number): [string, number][];
}

/** Add-k smoothing with a small k, so that one sighting of a pair outweighs no sighting a hundredfold. */
export const SMOOTHING_K = 0.01;

export function estimateBigram(text: string): BigramModel {
  const tokens = tokenize(text).map((t) => t.token);
  const vocabulary = [...new Set(tokens), UNKNOWN];
  const known = new Set(vocabulary);
  const pairs = new Map<string, number>();
  const lefts = new Map<string, number>();
  for (let i = 1; i < tokens.length; i++) {
    const a = tokens[i - 1] as string;
    const b = tokens[i] as string;
    pairs.set(`${a}\u0000${b}`, (pairs.get(`${a}\u0000${b}`) ?? 0) + 1);
    lefts.set(a, (lefts.get(a) ?? 0) + 1);
  }
  const norm = (t: string): string => (known.has(t) ? t : UNKNOWN);
  const pairCount = (a: string, b: string): number => pairs.get(`${norm(a)}\u0000${norm(b)}`) ?? 0;
  const leftCount = (a: string): number => lefts.get(norm(a)) ?? 0;
  const logprob = (a: string, b: string): number =>
    Math.log((pairCount(a, b) + SMOOTHING_K) / (leftCount(a) + SMOOTHING_K * vocabulary.length));
  return {
    vocabulary,
    pairCount,
    leftCount,
    logprob,
    top(a, n) {
      return vocabulary
        .map((b): [string, number] => [b, logprob(a, b)])
        .sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1))
        .slice(0, n);
    },
  };
}
