// English locale formats in the QuickJS guest (guest-locale.ts), checked against Node's own Intl (ICU): QuickJS
// alone gave "1234.5", "01/01/1970" and a sort with "C" before "a", with nothing to say so.
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createQuickJsDriver, runProgram } from '../../src/internal.ts';
import type { QuickJsDriver } from '../../src/internal.ts';

const NUMBERS = [
  '(1234.5).toLocaleString()',
  '(1234567.891).toLocaleString("en-US")',
  '(1.005).toLocaleString("en-US", { maximumFractionDigits: 2 })',
  '(0.256).toLocaleString("en-US", { style: "percent" })',
  '(1234.5).toLocaleString("en-US", { style: "currency", currency: "USD" })',
  '(-1234.5).toLocaleString("en-US", { style: "currency", currency: "EUR" })',
  '(1234.5).toLocaleString("en-US", { style: "currency", currency: "JPY" })',
  '(12).toLocaleString("en-US", { minimumFractionDigits: 2 })',
  '(999.9996).toLocaleString()',
  '(1e21).toLocaleString()',
  '(0.000001234).toLocaleString()',
  '(12345678901234567890n).toLocaleString()',
];
const STRINGS = [
  '["b", "a", "C", "é", "e", "E", "10", "9", "_x", " a", "B"].sort((a, b) => a.localeCompare(b))',
  '["item10", "item9", "item1"].sort((a, b) => a.localeCompare(b, undefined, { numeric: true }))',
  '["a".localeCompare("A", undefined, { sensitivity: "base" }), "a".localeCompare("á", undefined, { sensitivity: "accent" })]',
];
const DATES = [
  'd.toString()',
  'String(d)',
  'd.toTimeString()',
  'd.toLocaleString()',
  'd.toLocaleDateString()',
  'd.toLocaleTimeString()',
  'd.toLocaleDateString("en-US", { weekday: "long", year: "numeric", month: "long", day: "numeric" })',
  'd.toLocaleDateString("en-US", { month: "short", day: "numeric" })',
  'd.toLocaleTimeString("en-US", { hour: "2-digit", minute: "2-digit" })',
  'd.toLocaleDateString("en-US", { year: "numeric", month: "2-digit", day: "2-digit" })',
  'd.toLocaleString("en-US", { dateStyle: "medium", timeStyle: "short" })',
  'd.toLocaleString("en-US", { dateStyle: "full", timeStyle: "medium" })',
  'd.toLocaleDateString("en-US", { dateStyle: "short" })',
  'new Intl.DateTimeFormat("en-US", { month: "long", year: "numeric" }).format(d)',
  'Intl.DateTimeFormat().resolvedOptions().timeZone',
  'new Intl.NumberFormat("en-US", { style: "currency", currency: "USD" }).format(1234.5)',
  '["b", "a", "C"].sort(new Intl.Collator().compare)',
];

describe('locale formats in the quickjs guest', () => {
  let driver: QuickJsDriver;
  beforeAll(async () => {
    driver = createQuickJsDriver({ workers: 1, warmVmsPerWorker: 1 });
    await driver.ready();
  });
  afterAll(() => driver.close());
  const guest = async (code: string): Promise<unknown> => {
    const r = await runProgram({ driver, code });
    if (r.status !== 'succeeded') throw new Error(`${r.error.code}: ${r.error.message}`);
    return r.value;
  };

  it('numbers, strings and dates are formatted and ordered as Node (en-US, UTC) does', async () => {
    const setup = 'const d = new Date(Date.UTC(2024, 2, 5, 21, 5, 7));\n';
    const all = [...NUMBERS, ...STRINGS, ...DATES];
    const got = await guest(`${setup}[${all.join(',\n')}]`);
    // The host's answers, in UTC as the sandbox's clock is.
    const tz = process.env.TZ;
    process.env.TZ = 'UTC';
    try {
      expect(got).toEqual(runInNewContext(`${setup}[${all.join(',\n')}]`));
    } finally {
      if (tz === undefined) delete process.env.TZ;
      else process.env.TZ = tz;
    }
  });

  it('another locale, or an option not covered, is a RangeError, not a wrong string', async () => {
    for (const code of [
      '(1234.5).toLocaleString("de-DE")',
      '(1234.5).toLocaleString("en-US", { notation: "compact" })',
      'new Date(0).toLocaleDateString("en-US", { timeZone: "America/New_York" })',
    ]) {
      const r = await runProgram({ driver, code });
      expect(r.status === 'failed' && r.error.name, code).toBe('RangeError');
    }
  });
});
