/**
 * The guest's Intl (guest-intl.ts), answered with this process's ICU on the sandbox worker, synchronously (a host
 * callback, no message to the main thread). Every answer is a function of its request and of the ICU, CLDR and
 * time zone data (`intlEngine`, part of the engine a checkpoint is bound to), never of the process's locale or
 * time zone: 'en-US' and 'UTC' stand in for those. So nothing here is journaled and a replay reads the same text.
 */

export const DEFAULT_LOCALE = 'en-US';
export const DEFAULT_TIME_ZONE = 'UTC';

/** The ICU, CLDR and tz versions: formatting changes with them, so the engine name carries them. */
export function intlEngine(): string {
  const v = process.versions;
  return `icu-${v.icu ?? 'none'}+cldr-${v.cldr ?? 'none'}+tz-${v.tz ?? 'none'}`;
}

type Kind =
  | 'NumberFormat'
  | 'DateTimeFormat'
  | 'Collator'
  | 'PluralRules'
  | 'RelativeTimeFormat'
  | 'ListFormat'
  | 'DisplayNames';

/** The methods the guest may call on each kind (resolvedOptions is answered by `new`). */
const METHODS: Readonly<Record<Kind, readonly string[]>> = {
  NumberFormat: ['format', 'formatToParts', 'formatRange', 'formatRangeToParts'],
  DateTimeFormat: ['format', 'formatToParts', 'formatRange', 'formatRangeToParts'],
  Collator: ['compare'],
  PluralRules: ['select', 'selectRange'],
  RelativeTimeFormat: ['format', 'formatToParts'],
  ListFormat: ['format', 'formatToParts'],
  DisplayNames: ['of'],
};

interface Formatter {
  resolvedOptions(): object;
  [method: string]: unknown;
}
type Constructor = new (locales: string | string[], options: unknown) => Formatter;

/** Formatters by spec, the most recently used last: a program formats many values with few formatters. */
const formatters = new Map<string, Formatter>();
const FORMATTERS = 256;
/** A spec longer than this (a huge locale list) is not kept. */
const SPEC_KEPT_CHARS = 4096;
/**
 * An ICU call cannot be interrupted: its work is bounded by bounding what it is given (100,000 locales took V8
 * 350 ms to resolve). V8 has no such limits: past them the guest gets a RangeError, never a different answer.
 */
export const MAX_LOCALES = 1000;
export const MAX_REQUEST_CHARS = 4 * 1024 * 1024;

class GuestIntlError extends Error {}

function fail(message: string): never {
  throw new GuestIntlError(message);
}

function isKind(kind: unknown): kind is Kind {
  return typeof kind === 'string' && Object.hasOwn(METHODS, kind);
}

/** Reverses the guest's `enc`: NaN, infinities, -0, BigInt and undefined as tagged objects. */
function revive(v: unknown): unknown {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return v;
  const o = v as { $n?: unknown; $b?: unknown; $u?: unknown };
  if (typeof o.$n === 'string') return o.$n === '-0' ? -0 : Number(o.$n);
  if (typeof o.$b === 'string') return BigInt(o.$b);
  if (o.$u !== undefined) return undefined;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) out[k] = revive(x);
  return out;
}

function strings(list: unknown): string[] {
  if (!Array.isArray(list) || !list.every((x) => typeof x === 'string')) fail('a locale list is not strings');
  if (list.length > MAX_LOCALES) throw new RangeError(`Intl: more than ${MAX_LOCALES} locales`);
  return list;
}

/** A locale that is well formed but has no data falls back to en-US, as V8 falls back to its default. */
function locales(list: unknown): string | string[] {
  const requested = strings(list);
  return requested.length === 0 ? DEFAULT_LOCALE : [...requested, DEFAULT_LOCALE];
}

/** The options slot: [] when none were given, else [value]. */
function options(slot: unknown): unknown {
  if (!Array.isArray(slot) || slot.length > 1) fail('an options slot is malformed');
  return slot.length === 0 ? undefined : revive(slot[0]);
}

function withTimeZone(given: unknown): unknown {
  if (given === null) return null; // V8 throws its TypeError
  if (typeof given !== 'object') return { timeZone: DEFAULT_TIME_ZONE };
  const o = given as { timeZone?: unknown };
  return o.timeZone === undefined ? { ...o, timeZone: DEFAULT_TIME_ZONE } : o;
}

/** The formatter kept under `key`, else the one `make` makes (kept unless its key is huge). */
function kept(key: string, make: () => Formatter): Formatter {
  const known = formatters.get(key);
  if (known) {
    formatters.delete(key);
    formatters.set(key, known);
    return known;
  }
  const made = make();
  if (key.length <= SPEC_KEPT_CHARS) {
    formatters.set(key, made);
    if (formatters.size > FORMATTERS) formatters.delete(formatters.keys().next().value as string);
  }
  return made;
}

function construct(kind: Kind, list: unknown, given: unknown): Formatter {
  const C = Intl[kind] as unknown as Constructor;
  return new C(locales(list), kind === 'DateTimeFormat' ? withTimeZone(given) : given);
}

function formatter(spec: string): Formatter {
  return kept(spec, () => {
    const parsed = JSON.parse(spec) as unknown;
    if (!Array.isArray(parsed) || parsed.length !== 3 || !isKind(parsed[0]))
      fail('an Intl spec is malformed');
    return construct(parsed[0], parsed[1], options(parsed[2]));
  });
}

function invoke(f: Formatter, method: string, args: readonly unknown[]): unknown {
  return Reflect.apply(f[method] as (...a: unknown[]) => unknown, f, args);
}

function call(spec: string, method: string, args: string): unknown {
  const f = formatter(spec);
  const kind = (JSON.parse(spec) as [Kind])[0];
  if (!METHODS[kind].includes(method)) fail(`Intl.${kind} has no method ${method}`);
  const values = JSON.parse(args) as unknown;
  if (!Array.isArray(values)) fail('Intl arguments are malformed');
  const revived = values.map(revive);
  // The guest gives a date for format(); the host's own clock must never stand in for a missing one.
  if (kind === 'DateTimeFormat' && revived.some((v) => v === undefined) && !method.startsWith('formatRange'))
    fail('a date is missing');
  return invoke(f, method, revived);
}

type DateMethod = 'toLocaleString' | 'toLocaleDateString' | 'toLocaleTimeString';
const DATE_METHODS: Readonly<
  Record<DateMethod, { required: 'any' | 'date' | 'time'; defaults: 'all' | 'date' | 'time' }>
> = {
  toLocaleString: { required: 'any', defaults: 'all' },
  toLocaleDateString: { required: 'date', defaults: 'date' },
  toLocaleTimeString: { required: 'time', defaults: 'time' },
};

/** ToDateTimeOptions (ECMA-402, 2022), so the formatter a Date method needs can be kept. */
function dateTimeOptions(given: Record<string, unknown>, method: DateMethod): Record<string, unknown> {
  const { required, defaults } = DATE_METHODS[method];
  const o = { ...given };
  const some = (names: readonly string[]): boolean => names.some((n) => o[n] !== undefined);
  let needDefaults = true;
  if (required !== 'time' && some(['weekday', 'year', 'month', 'day'])) needDefaults = false;
  if (required !== 'date' && some(['dayPeriod', 'hour', 'minute', 'second', 'fractionalSecondDigits']))
    needDefaults = false;
  if (o.dateStyle !== undefined || o.timeStyle !== undefined) needDefaults = false;
  if (required === 'date' && o.timeStyle !== undefined) throw new TypeError('Invalid option : timeStyle');
  if (required === 'time' && o.dateStyle !== undefined) throw new TypeError('Invalid option : dateStyle');
  if (needDefaults && defaults !== 'time')
    Object.assign(o, { year: 'numeric', month: 'numeric', day: 'numeric' });
  if (needDefaults && defaults !== 'date')
    Object.assign(o, { hour: 'numeric', minute: 'numeric', second: 'numeric' });
  return o;
}

function dateMethod(spec: string, method: string, time: string): unknown {
  if (!Object.hasOwn(DATE_METHODS, method)) fail(`Date has no method ${method}`);
  const parsed = JSON.parse(spec) as unknown;
  if (!Array.isArray(parsed) || parsed.length !== 2) fail('a Date spec is malformed');
  const t = Number(time);
  const given = options(parsed[1]);
  if (given === null) return new Date(t)[method as DateMethod](locales(parsed[0]), null as never); // V8's TypeError
  const plain = typeof given === 'object' ? (given as Record<string, unknown>) : {};
  const f = kept(`${method}:${spec}`, () =>
    construct('DateTimeFormat', parsed[0], dateTimeOptions(plain, method as DateMethod)),
  );
  return invoke(f, 'format', [t]);
}

function staticCall(spec: string): unknown {
  const parsed = JSON.parse(spec) as unknown[];
  if (!Array.isArray(parsed)) fail('an Intl call is malformed');
  const [fn, ...rest] = parsed;
  if (fn === 'getCanonicalLocales') return Intl.getCanonicalLocales(strings(rest[0]));
  if (fn === 'supportedValuesOf') return Intl.supportedValuesOf(String(rest[0]) as never);
  if (fn === 'supportedLocalesOf' && isKind(rest[0]))
    return (
      Intl[rest[0]] as unknown as { supportedLocalesOf(l: string[], o: unknown): string[] }
    ).supportedLocalesOf(strings(rest[1]), options(rest[2]));
  return fail('an Intl call is malformed');
}

function caseMap(spec: string, method: string, text: string): string {
  const list = strings(JSON.parse(spec));
  if (method === 'toLocaleUpperCase')
    return text.toLocaleUpperCase(list.length === 0 ? DEFAULT_LOCALE : list);
  if (method === 'toLocaleLowerCase')
    return text.toLocaleLowerCase(list.length === 0 ? DEFAULT_LOCALE : list);
  return fail(`String has no method ${method}`);
}

function answer(op: string, spec: string, a: string, b: string): unknown {
  switch (op) {
    case 'new':
      return formatter(spec).resolvedOptions();
    case 'compare':
      return invoke(formatter(spec), 'compare', [a, b]);
    case 'call':
      return call(spec, a, b);
    case 'date':
      return dateMethod(spec, a, b);
    case 'static':
      return staticCall(spec);
    case 'case':
      return caseMap(spec, a, b);
    default:
      return fail(`no Intl operation ${op}`);
  }
}

/**
 * One guest request: JSON of the answer, or `E` and `[name, message]` for what it threw (V8's RangeError or
 * TypeError for what the guest asked; Error for a request the guest runtime should never have made).
 */
export function answerIntl(op: string, spec: string, a: string, b: string): string {
  try {
    if (spec.length + a.length + b.length > MAX_REQUEST_CHARS)
      throw new RangeError(`Intl: the arguments are over ${MAX_REQUEST_CHARS} characters`);
    return JSON.stringify(answer(op, spec, a, b)) ?? 'null';
  } catch (e) {
    const name = e instanceof RangeError ? 'RangeError' : e instanceof TypeError ? 'TypeError' : 'Error';
    const message =
      e instanceof GuestIntlError || !(e instanceof Error)
        ? `Intl: ${String(e instanceof Error ? e.message : e)}`
        : e.message;
    return `E${JSON.stringify([name, message])}`;
  }
}
