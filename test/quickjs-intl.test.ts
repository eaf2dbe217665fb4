// Intl and the locale-aware methods in the quickjs guest (issue 19). QuickJS has no ICU: the sandbox worker answers
// with Node's, with en-US and UTC as the defaults whatever the process's. Node is the oracle: each case runs in the
// guest and in Node (with the defaults spelled out), and errors are V8's own, by name and message.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createQuickJsDriver, runProgram } from '../src/internal.ts';
import type { QuickJsDriver } from '../src/internal.ts';
import { MAX_LOCALES } from '../src/sandbox/quickjs/intl-host.ts';

let driver: QuickJsDriver;
beforeAll(async () => {
  driver = createQuickJsDriver({ workers: 1, warmVmsPerWorker: 2 });
  await driver.ready();
});
afterAll(() => driver.close());

async function value(code: string): Promise<unknown> {
  const r = await runProgram({ driver, code });
  if (r.status !== 'succeeded') throw new Error(`${r.error.code}: ${r.error.message} (line ${r.error.line})`);
  return r.value;
}

/** Each case's answer, or its error's name and message, in the guest or in Node. */
const CASES_FN = `(cases) => cases.map((c) => {
  try { const v = c(); return typeof v === 'string' || typeof v === 'number' ? v : JSON.stringify(v); }
  catch (e) { return e.name + ': ' + e.message; }
})`;
async function both(cases: readonly string[]): Promise<{ guest: unknown; node: unknown }> {
  const list = `[${cases.map((c) => `() => (${c})`).join(',\n')}]`;
  const guest = await value(`return (${CASES_FN})(${list});`);
  const node = (0, eval)(`(${CASES_FN})(${list})`) as unknown;
  return { guest, node };
}

const LOCALES = ['en-US', 'de-DE', 'fr-FR', 'ja-JP', 'ar-EG', 'hi-IN', 'pt-BR', 'zh-Hans-CN', 'ru', 'tr'];

describe('Intl in the quickjs guest answers as Node does', () => {
  it('NumberFormat: styles, currencies, units, notations, rounding, parts, ranges, BigInt and decimal strings', async () => {
    const options = [
      '{}',
      "{ style: 'currency', currency: 'EUR' }",
      "{ style: 'currency', currency: 'JPY', currencyDisplay: 'name' }",
      "{ style: 'percent', maximumFractionDigits: 1 }",
      "{ style: 'unit', unit: 'kilometer-per-hour', unitDisplay: 'long' }",
      "{ notation: 'compact', compactDisplay: 'short' }",
      "{ notation: 'scientific' }",
      '{ minimumFractionDigits: 2, maximumFractionDigits: 2, useGrouping: false }',
      "{ maximumSignificantDigits: 3, roundingMode: 'floor' }",
      "{ signDisplay: 'exceptZero' }",
      "{ numberingSystem: 'arab' }",
    ];
    const numbers = [
      '0',
      '-0',
      '1234567.891',
      '-0.005',
      'NaN',
      'Infinity',
      '1e21',
      '12345678901234567890n',
      "'1234.5678901234567890123'",
    ];
    const cases: string[] = [];
    for (const l of LOCALES)
      for (const o of options)
        cases.push(...numbers.map((n) => `new Intl.NumberFormat('${l}', ${o}).format(${n})`));
    cases.push(
      `new Intl.NumberFormat('de', { style: 'currency', currency: 'EUR' }).formatToParts(-1234.5)`,
      `new Intl.NumberFormat('en', { style: 'currency', currency: 'USD' }).formatRange(3, 5)`,
      `new Intl.NumberFormat('en').formatRangeToParts(3, 5)`,
      `new Intl.NumberFormat('ja', { style: 'unit', unit: 'liter' }).resolvedOptions()`,
      `Intl.NumberFormat('fr').format(1e6)`,
      `[1, 2.5, 1e6].map(new Intl.NumberFormat('de').format)`,
      `(1234.5).toLocaleString()`,
      `(1234.5).toLocaleString('de-CH', { style: 'currency', currency: 'CHF' })`,
      `12345678901234567890n.toLocaleString('hi-IN')`,
      `new Intl.NumberFormat('en', { style: 'currency' })`,
      `new Intl.NumberFormat('en', { maximumFractionDigits: 200 })`,
      `new Intl.NumberFormat('en', { style: 'bogus' })`,
      `new Intl.NumberFormat('en', null)`,
      `new Intl.NumberFormat('en_US')`,
      `new Intl.NumberFormat([1])`,
      `new Intl.NumberFormat('en').formatRange(undefined, 2)`,
      `Number.prototype.toLocaleString.call('1')`,
    );
    const { guest, node } = await both(cases);
    expect(guest).toEqual(node);
  });

  it('DateTimeFormat with time zones, styles, components, parts and ranges; the Date methods', async () => {
    const options = [
      "{ timeZone: 'UTC' }",
      "{ timeZone: 'America/New_York', dateStyle: 'full', timeStyle: 'long' }",
      "{ timeZone: 'Asia/Kolkata', dateStyle: 'medium' }",
      "{ timeZone: 'Australia/Lord_Howe', timeStyle: 'full' }",
      "{ timeZone: 'Europe/Berlin', weekday: 'long', year: 'numeric', month: 'long', day: 'numeric' }",
      "{ timeZone: 'UTC', hour: '2-digit', minute: '2-digit', hour12: false }",
      "{ timeZone: 'UTC', hourCycle: 'h11', hour: 'numeric', dayPeriod: 'long' }",
      "{ timeZone: 'Pacific/Chatham', timeZoneName: 'longOffset', fractionalSecondDigits: 3, second: 'numeric' }",
      "{ timeZone: 'UTC', calendar: 'islamic', era: 'long', year: 'numeric' }",
      "{ timeZone: 'Etc/GMT+5', month: 'narrow' }",
    ];
    const dates = ['0', '1700000000123', '-62135596800000', '951782400000'];
    const cases: string[] = [];
    for (const l of LOCALES)
      for (const o of options)
        cases.push(...dates.map((d) => `new Intl.DateTimeFormat('${l}', ${o}).format(${d})`));
    for (const m of ['toLocaleString', 'toLocaleDateString', 'toLocaleTimeString'])
      for (const l of LOCALES)
        for (const o of [
          ...options,
          "{ timeZone: 'UTC', year: 'numeric' }",
          "{ timeZone: 'UTC', hour: 'numeric' }",
        ])
          cases.push(`new Date(1700000000123).${m}('${l}', ${o})`);
    cases.push(
      `new Intl.DateTimeFormat('en', { timeZone: 'UTC', dateStyle: 'short', timeStyle: 'short' }).formatToParts(1700000000123)`,
      `new Intl.DateTimeFormat('en', { timeZone: 'UTC', dateStyle: 'medium' }).formatRange(0, 1700000000123)`,
      `new Intl.DateTimeFormat('de', { timeZone: 'Europe/Paris', hour: 'numeric' }).formatRangeToParts(0, 7200000)`,
      `new Intl.DateTimeFormat('en', { timeZone: 'America/Los_Angeles' }).resolvedOptions()`,
      `new Intl.DateTimeFormat('en', { timeZone: 'Mars/Base' })`,
      `new Intl.DateTimeFormat('en', { dateStyle: 'full', year: 'numeric' })`,
      `new Intl.DateTimeFormat('en').format(NaN)`,
      `new Intl.DateTimeFormat('en').formatRange(undefined, 1)`,
      `new Date(0).toLocaleDateString('en', { timeZone: 'UTC', timeStyle: 'short' })`,
      `new Date(0).toLocaleTimeString('en', { timeZone: 'UTC', dateStyle: 'short' })`,
      `new Date(0).toLocaleString('en', null)`,
      `new Date(NaN).toLocaleString('en', { timeZone: 'UTC' })`,
      `Date.prototype.toLocaleString.call({})`,
    );
    const { guest, node } = await both(cases);
    expect(guest).toEqual(node);
  });

  it('PluralRules, Collator and localeCompare, RelativeTimeFormat, ListFormat, DisplayNames, case mapping', async () => {
    const words =
      "['résumé', 'resume', 'Résumé', 'Zebra', 'apple', 'Äpfel', 'a10', 'a9', 'ß', 'ss', 'ı', 'I', 'ch', 'cz']";
    const cases: string[] = [];
    for (const l of LOCALES) {
      cases.push(
        `[0, 1, 2, 3, 5, 11, 22, 101, 1.5].map((n) => new Intl.PluralRules('${l}').select(n))`,
        `[1, 2, 3, 4, 11, 21, 102].map((n) => new Intl.PluralRules('${l}', { type: 'ordinal' }).select(n))`,
        `new Intl.PluralRules('${l}').selectRange(1, 5)`,
        `${words}.slice().sort(new Intl.Collator('${l}').compare)`,
        `${words}.slice().sort(new Intl.Collator('${l}', { sensitivity: 'base', numeric: true }).compare)`,
        `${words}.slice().sort((a, b) => a.localeCompare(b, '${l}', { caseFirst: 'upper' }))`,
        `[-1, 0, 1, 2.5].map((n) => new Intl.RelativeTimeFormat('${l}', { numeric: 'auto' }).format(n, 'day'))`,
        `new Intl.RelativeTimeFormat('${l}', { style: 'short' }).formatToParts(-3, 'months')`,
        `new Intl.ListFormat('${l}', { type: 'disjunction' }).format(['a', 'b', 'c'])`,
        `new Intl.ListFormat('${l}', { style: 'narrow', type: 'unit' }).formatToParts(['1', '2'])`,
        `['US', 'DE', 'JP'].map((c) => new Intl.DisplayNames('${l}', { type: 'region' }).of(c))`,
        `'Iıİi'.toLocaleUpperCase('${l}') + 'Iıİi'.toLocaleLowerCase('${l}')`,
      );
    }
    cases.push(
      `'a'.localeCompare('B')`,
      `${words}.slice().sort((a, b) => a.localeCompare(b))`,
      `Intl.PluralRules('en')`,
      `new Intl.PluralRules('en', null)`,
      `new Intl.RelativeTimeFormat('en').format(1, 'fortnight')`,
      `new Intl.ListFormat('en').format(['a', 1])`,
      `new Intl.Collator('en', { usage: 'search', sensitivity: 'accent' }).resolvedOptions()`,
      `new Intl.DisplayNames('en', {}).of('US')`,
      `Intl.getCanonicalLocales(['EN-us', 'zh-hant-tw'])`,
      `Intl.NumberFormat.supportedLocalesOf(['de-DE', 'xx-XX', 'fr'])`,
      `Intl.supportedValuesOf('calendar')`,
      `Object.prototype.toString.call(Intl) + Object.prototype.toString.call(new Intl.ListFormat())`,
      `[1234.5, new Date(0), null, 12n].toLocaleString('de', { timeZone: 'UTC' })`,
      `new Float64Array([1234.5, 0.25]).toLocaleString('fr')`,
      `Intl.Collator.prototype.compare`,
      `Intl.PluralRules.prototype.select.call(1)`,
      `[new Intl.Locale('en-Latn-US', { calendar: 'gregory', numeric: true })].map((l) => [String(l), l.baseName, l.language, l.script, l.region, l.calendar, l.numeric, l.hourCycle])`,
      `[new Intl.Locale('zh-TW').maximize().toString(), new Intl.Locale('en-Latn-US').minimize().toString(), new Intl.Locale(new Intl.Locale('de'), { region: 'AT' }).toString()]`,
      `[new Intl.Locale('ar-EG').textInfo, new Intl.Locale('en-US').weekInfo, new Intl.Locale('de-CH').timeZones, new Intl.Locale('ja').calendars]`,
      `new Intl.NumberFormat(new Intl.Locale('de-CH')).format(1234.5) + ' ' + Intl.getCanonicalLocales([new Intl.Locale('EN-gb')])`,
      `new Intl.Locale()`,
      `new Intl.Locale('x_y')`,
      `Intl.Locale('en')`,
      `[Intl.Locale.length, Object.prototype.toString.call(new Intl.Locale('en'))]`,
      `Intl.Collator.prototype.resolvedOptions.call(new Intl.NumberFormat())`,
    );
    const { guest, node } = await both(cases);
    expect(guest).toEqual(node);
  });
});

describe('defaults and bounds', () => {
  it('en-US and UTC by default, not the process time zone; an unknown but well formed locale falls back to en-US', async () => {
    const before = process.env.TZ;
    process.env.TZ = 'Asia/Tokyo';
    try {
      expect(
        await value(`return [
          new Date(0).toLocaleString(), new Date(0).toLocaleDateString(), new Date(0).toLocaleTimeString(),
          new Intl.DateTimeFormat().resolvedOptions().timeZone, new Intl.DateTimeFormat().format(0),
          new Intl.NumberFormat().resolvedOptions().locale, new Intl.NumberFormat('xx').resolvedOptions().locale,
          (1234.5).toLocaleString(), [1e3, 2e3].toLocaleString(),
        ];`),
      ).toEqual([
        '1/1/1970, 12:00:00 AM',
        '1/1/1970',
        '12:00:00 AM',
        'UTC',
        '1/1/1970',
        'en-US',
        'en-US',
        '1,234.5',
        '1,000,2,000',
      ]);
    } finally {
      if (before === undefined) delete process.env.TZ;
      else process.env.TZ = before;
    }
  });

  it("format() with no date reads the guest's clock, as Date.now() does", async () => {
    const [now, formatted] = (await value(
      `return [Date.now(), new Intl.DateTimeFormat('en', { timeZone: 'UTC', dateStyle: 'short', timeStyle: 'medium' }).format()];`,
    )) as [number, string];
    const oracle = new Intl.DateTimeFormat('en', {
      timeZone: 'UTC',
      dateStyle: 'short',
      timeStyle: 'medium',
    });
    expect(formatted).toBe(oracle.format(now));
  });

  it('the engine names the ICU, CLDR and tz data it formats with', () => {
    const v = process.versions;
    expect(driver.engine).toMatch(/^quickjs-wasi@[\d.]+\+icu-/);
    expect(driver.engine).toContain(`+icu-${v.icu}+cldr-${v.cldr}+tz-${v.tz}`);
  });

  it('a locale list or an argument too large for one uninterruptible ICU call is a RangeError', async () => {
    expect(
      await value(`const out = [];
        try { new Intl.NumberFormat(Array(${MAX_LOCALES + 1}).fill('en')); } catch (e) { out.push(e.name); }
        try { 'a'.localeCompare('b'.repeat(5 * 1024 * 1024)); } catch (e) { out.push(e.name); }
        out.push(new Intl.NumberFormat(Array(${MAX_LOCALES}).fill('de')).resolvedOptions().locale);
        return out;`),
    ).toEqual(['RangeError', 'RangeError', 'de']);
  });

  it('a formatter the worker dropped (it keeps 256) is made again from its spec', async () => {
    expect(
      await value(`const nf = new Intl.NumberFormat('de', { minimumFractionDigits: 1 });
        const co = new Intl.Collator('sv');
        const first = [nf.format(1), ['ä', 'z'].sort(co.compare)];
        for (let i = 0; i < 300; i++) new Intl.NumberFormat('en', { minimumIntegerDigits: (i % 20) + 1, maximumFractionDigits: i % 15 });
        return [first, [nf.format(1), ['ä', 'z'].sort(co.compare), nf.resolvedOptions().locale]];`),
    ).toEqual([
      ['1,0', ['z', 'ä']],
      ['1,0', ['z', 'ä'], 'de'],
    ]);
  });

  it('Intl objects are subclassable, frozen where the intrinsics are, and keep their formatter between calls', async () => {
    expect(
      await value(`class Money extends Intl.NumberFormat { constructor() { super('en', { style: 'currency', currency: 'USD' }); } }
        const m = new Money();
        const sorted = Array.from({ length: 2000 }, (_, i) => 'item ' + (2000 - i)).sort(new Intl.Collator('en', { numeric: true }).compare);
        return [m.format(5), m instanceof Intl.NumberFormat, Object.isFrozen(Intl), Object.isFrozen(Intl.NumberFormat.prototype), sorted[0], sorted[1999]];`),
    ).toEqual(['$5.00', true, true, true, 'item 1', 'item 2000']);
  });
});
