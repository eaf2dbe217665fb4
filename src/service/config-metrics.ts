import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { CodecallError } from '../errors/index.ts';

/** Who may scrape GET /metrics (totals over every tenant): see ADR 0032. */
export const metricsConfigShape = {
  /**
   * A bearer token for the scraper (env `CODECALL_METRICS_TOKEN`, the config file, or `--metrics-token-file`;
   * never a plain flag: `ps` shows flags). With auth on, /metrics takes this token or an admin key; without a
   * token, admin keys only. Default null. At least 16 characters.
   */
  metricsToken: z.string().min(16).nullable().default(null),
};

/** The token in `--metrics-token-file FILE`: the file's text, trimmed (a trailing newline is not part of it). */
export function readMetricsTokenFile(path: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new CodecallError(
      'INVALID_CONFIG',
      `cannot read --metrics-token-file ${path}: ${(e as Error).message}`,
      {
        details: { field: 'metricsToken', source: path },
      },
    );
  }
  return text.trim();
}
