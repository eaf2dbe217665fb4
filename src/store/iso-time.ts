/** Milliseconds per UTC day; `toISOString` of the years 0-9999 (after 1970) is computed here, the rest by Date. */
const DAY_MS = 86_400_000;
const YEAR_10000_MS = 253_402_300_800_000;
const TWO_DIGITS = Array.from({ length: 60 }, (_, i) => String(i).padStart(2, '0'));

let lastDay = Number.NaN;
let lastDayPrefix = '';

/**
 * `new Date(ms).toISOString()`, eight times faster for the timestamps a journal read converts (2,000 entries of
 * one task fall in a day or two): the `YYYY-MM-DDT` of the last day is kept, the time of day is arithmetic. A
 * resume converts every entry's `created_at`; with Date that was a fifth of the journal read (ADR 0056).
 */
export function isoTime(ms: number): string {
  if (!Number.isInteger(ms) || ms < 0 || ms >= YEAR_10000_MS) return new Date(ms).toISOString();
  const day = Math.floor(ms / DAY_MS);
  if (day !== lastDay) {
    lastDayPrefix = new Date(day * DAY_MS).toISOString().slice(0, 11);
    lastDay = day;
  }
  let rest = ms - day * DAY_MS;
  const hours = Math.floor(rest / 3_600_000);
  rest -= hours * 3_600_000;
  const minutes = Math.floor(rest / 60_000);
  rest -= minutes * 60_000;
  const seconds = Math.floor(rest / 1000);
  const milli = rest - seconds * 1000;
  const pad = milli < 10 ? '00' : milli < 100 ? '0' : '';
  return `${lastDayPrefix}${TWO_DIGITS[hours]}:${TWO_DIGITS[minutes]}:${TWO_DIGITS[seconds]}.${pad}${milli}Z`;
}
