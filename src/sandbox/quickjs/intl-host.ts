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

/** The methods the guest may call on each kind, besides resolvedOptions. */
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

interface Entry {
  readonly spec: string;
  readonly kind: Kind;
  readonly formatter: Formatter;
}
/**
 * Formatters by id, the most recently used last, and ids by spec. A guest names a formatter by its id (a number
 * crosses the boundary cheaply, a spec does not: ~2.5 µs a string); an id dropped here is never given again, so
 * a guest holding one is told (STALE) and registers its spec anew. Ids are per worker, never seen by guest code.
 */
const formatters = new Map<number, Entry>();
const ids = new Map<string, number>();
const FORMATTERS = 256;
let nextId = 1;
/** What a call with an id that is no longer known answers. */
export const STALE = 'S';
/** What compareIntl answers for an id that is no longer known. */
export const STALE_COMPARE = -2;
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

function construct(kind: Kind, list: unknown, given: unknown): Formatter {
  const C = Intl[kind] as unknown as Constructor;
  return new C(locales(list), kind === 'DateTimeFormat' ? withTimeZone(given) : given);
}

/** A spec: `[kind, locales, options slot]`, and for a Date method's formatter the method as well. */
function make(spec: string): Entry {
  const parsed = JSON.parse(spec) as unknown;
  if (!Array.isArray(parsed) || parsed.length < 3 || parsed.length > 4 || !isKind(parsed[0]))
    fail('an Intl spec is malformed');
  const [kind, list, slot, method] = parsed as [Kind, unknown, unknown, unknown];
  if (method === undefined) return { spec, kind, formatter: construct(kind, list, options(slot)) };
  if (kind !== 'DateTimeFormat' || !isDateMethod(method)) return fail('an Intl spec is malformed');
  const given = options(slot);
  if (given === null) return new Date(0)[method](locales(list), null as never) as never; // V8's TypeError
  const plain = typeof given === 'object' ? (given as Record<string, unknown>) : {};
  return { spec, kind, formatter: construct(kind, list, dateTimeOptions(plain, method)) };
}

/** The id of the formatter `spec` makes: made (and validated) now unless it is known. */
function register(spec: string): number {
  const known = ids.get(spec);
  if (known !== undefined) return known;
  const entry = make(spec);
  const id = nextId++;
  formatters.set(id, entry);
  ids.set(spec, id);
  if (formatters.size > FORMATTERS) {
    const [oldest, dropped] = formatters.entries().next().value as [number, Entry];
    formatters.delete(oldest);
    ids.delete(dropped.spec);
  }
  return id;
}

function lookup(id: number): Entry | undefined {
  const entry = formatters.get(id);
  if (entry) {
    formatters.delete(id);
    formatters.set(id, entry);
  }
  return entry;
}

type DateMethod = 'toLocaleString' | 'toLocaleDateString' | 'toLocaleTimeString';
function isDateMethod(m: unknown): m is DateMethod {
  return typeof m === 'string' && Object.hasOwn(DATE_METHODS, m);
}
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

const LOCALE_FIELDS = [
  'language',
  'script',
  'region',
  'baseName',
  'calendar',
  'caseFirst',
  'collation',
  'hourCycle',
  'numeric',
  'numberingSystem',
  'calendars',
  'collations',
  'hourCycles',
  'numberingSystems',
  'textInfo',
  'timeZones',
  'weekInfo',
] as const;

/** What an `Intl.Locale` says, all of it at once: the guest's Locale is a value. */
function localeInfo(spec: string): Record<string, unknown> {
  const parsed = JSON.parse(spec) as unknown;
  if (!Array.isArray(parsed) || parsed.length !== 2) fail('a Locale spec is malformed');
  const tag = revive(parsed[0]) as string;
  const given = options(parsed[1]) as Intl.LocaleOptions | undefined;
  const l = new Intl.Locale(tag, given);
  const info: Record<string, unknown> = {
    tag: l.toString(),
    maximized: l.maximize().toString(),
    minimized: l.minimize().toString(),
  };
  for (const k of LOCALE_FIELDS) info[k] = (l as unknown as Record<string, unknown>)[k];
  return info;
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
    case 'id':
      return register(spec);
    case 'static':
      return staticCall(spec);
    case 'locale':
      return localeInfo(spec);
    case 'case':
      return caseMap(spec, a, b);
    default:
      return fail(`no Intl operation ${op}`);
  }
}

function failed(e: unknown): string {
  const name = e instanceof RangeError ? 'RangeError' : e instanceof TypeError ? 'TypeError' : 'Error';
  const message =
    e instanceof GuestIntlError || !(e instanceof Error)
      ? `Intl: ${String(e instanceof Error ? e.message : e)}`
      : e.message;
  return `E${JSON.stringify([name, message])}`;
}

function tooLarge(chars: number): void {
  if (chars > MAX_REQUEST_CHARS)
    throw new RangeError(`Intl: the arguments are over ${MAX_REQUEST_CHARS} characters`);
}

/**
 * A request that is not a formatter's: `id` (a spec's formatter id, made and validated), `static`
 * (supportedLocalesOf, getCanonicalLocales, supportedValuesOf) or `case` (toLocaleUpperCase/LowerCase). Answers
 * JSON, or `E` and `[name, message]` for what it threw (V8's RangeError or TypeError for what the guest asked;
 * Error for a request the guest runtime should never have made).
 */
export function answerIntl(op: string, spec: string, a: string, b: string): string {
  try {
    tooLarge(spec.length + a.length + b.length);
    return JSON.stringify(answer(op, spec, a, b)) ?? 'null';
  } catch (e) {
    return failed(e);
  }
}

/** A formatter's method with JSON arguments (`enc`oded): its JSON answer, `E...` for an error, or STALE. */
export function callIntl(id: number, method: string, args: string): string {
  try {
    tooLarge(args.length);
    const entry = lookup(id);
    if (!entry) return STALE;
    const kind = entry.kind;
    if (method !== 'resolvedOptions' && !METHODS[kind].includes(method))
      fail(`Intl.${kind} has no method ${method}`);
    const values = JSON.parse(args) as unknown;
    if (!Array.isArray(values)) fail('Intl arguments are malformed');
    const revived = values.map(revive);
    // The guest gives a date for format(); the host's own clock must never stand in for a missing one.
    if (
      kind === 'DateTimeFormat' &&
      revived.some((v) => v === undefined) &&
      !method.startsWith('formatRange')
    )
      fail('a date is missing');
    const f = entry.formatter;
    return JSON.stringify(Reflect.apply(f[method] as (...x: unknown[]) => unknown, f, revived)) ?? 'null';
  } catch (e) {
    return failed(e);
  }
}

/** A collator's compare: -1, 0 or 1; STALE_COMPARE for an id no longer known (or a RangeError's worth of text). */
export function compareIntl(id: number, a: string, b: string): number {
  if (a.length + b.length > MAX_REQUEST_CHARS) return Number.NaN;
  const entry = lookup(id);
  if (!entry) return STALE_COMPARE;
  if (entry.kind !== 'Collator') return Number.NaN;
  return (entry.formatter.compare as (x: string, y: string) => number)(a, b);
}
