/**
 * String formats as regexes over the string's characters (parsed by regex.ts like a pattern). JSON Schema 2020-12
 * makes `format` an annotation; a grammar engine enforces it (the model should write a date where one is asked).
 * date checks days per month and leap years (both regular); time takes a leap second at any minute.
 */
const LEAP_YEAR = '([0-9]{2}(0[48]|[2468][048]|[13579][26])|([02468][048]|[13579][26])00)';
const DATE =
  `([0-9]{4}-(0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])` +
  `|[0-9]{4}-(0[469]|11)-(0[1-9]|[12][0-9]|30)` +
  `|[0-9]{4}-02-(0[1-9]|1[0-9]|2[0-8])` +
  `|${LEAP_YEAR}-02-29)`;
const FRAC = '(\\.[0-9]+)?';
const OFFSET = '([zZ]|[+-]([01][0-9]|2[0-3]):[0-5][0-9])';
// A leap second is 23:59:60 in UTC: taken with Z or a zero offset only (other offsets shift it to another local
// minute, a crossing dependency too large to spell out; stricter, never looser).
const TIME = `(([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]${FRAC}${OFFSET}|23:59:60${FRAC}([zZ]|[+-]00:00))`;
const OCTET = '(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])';
const IPV4 = `${OCTET}(\\.${OCTET}){3}`;
const H16 = '[0-9a-fA-F]{1,4}';
const LS32 = `(${H16}:${H16}|${IPV4})`;
const IPV6 =
  `((${H16}:){6}${LS32}` +
  `|::(${H16}:){5}${LS32}` +
  `|(${H16})?::(${H16}:){4}${LS32}` +
  `|((${H16}:){0,1}${H16})?::(${H16}:){3}${LS32}` +
  `|((${H16}:){0,2}${H16})?::(${H16}:){2}${LS32}` +
  `|((${H16}:){0,3}${H16})?::${H16}:${LS32}` +
  `|((${H16}:){0,4}${H16})?::${LS32}` +
  `|((${H16}:){0,5}${H16})?::${H16}` +
  `|((${H16}:){0,6}${H16})?::)`;
// RFC 5321's local part (a dot-atom, or a quoted string of printable ASCII where a backslash escapes any of it)
// and domain (a hostname, or an IPv4 or IPv6 address literal in brackets).
const ATEXT = "[a-zA-Z0-9!#$%&'*+/=?^_`{|}~-]";
const QUOTED_LOCAL = '"([ !#-\\[\\]-~]|\\\\[ -~])*"';
const LABEL = '[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?';
// A hostname domain of two labels at least (RFC 5321 takes one; a dotless address is refused: stricter, never
// looser).
const LOCAL_PART = `(${ATEXT}+(\\.${ATEXT}+)*|${QUOTED_LOCAL})`;
const EMAIL = `${LOCAL_PART}@(${LABEL}(\\.${LABEL})+|\\[${IPV4}\\]|\\[IPv6:${IPV6}\\])`;
// RFC 3986's grammar: scheme ":" hier-part ["?" query] ["#" fragment].
const PCT = '%[0-9a-fA-F]{2}';
const UNRESERVED = '[a-zA-Z0-9._~-]';
const SUB_DELIMS = "[!$&'()*+,;=]";
const PCHAR = `(${UNRESERVED}|${PCT}|${SUB_DELIMS}|[:@])`;
const USERINFO = `(${UNRESERVED}|${PCT}|${SUB_DELIMS}|:)*`;
const IP_LITERAL = `\\[(${IPV6}|[vV][0-9a-fA-F]+\\.(${UNRESERVED}|${SUB_DELIMS}|:)+)\\]`;
const REG_NAME = `(${UNRESERVED}|${PCT}|${SUB_DELIMS})*`;
const AUTHORITY = `(${USERINFO}@)?(${IP_LITERAL}|${IPV4}|${REG_NAME})(:[0-9]*)?`;
const SEGMENT = `${PCHAR}*`;
const HIER = `(//${AUTHORITY}(/${SEGMENT})*|/(${PCHAR}+(/${SEGMENT})*)?|${PCHAR}+(/${SEGMENT})*|)`;
const QUERY_FRAGMENT = `(\\?(${PCHAR}|[/?])*)?(#(${PCHAR}|[/?])*)?`;
const URI = `[a-zA-Z][a-zA-Z0-9+.-]*:${HIER}${QUERY_FRAGMENT}`;
const NO_COLON = `(${UNRESERVED}|${PCT}|${SUB_DELIMS}|@)`;
const RELATIVE = `(//${AUTHORITY}(/${SEGMENT})*|/(${PCHAR}+(/${SEGMENT})*)?|${NO_COLON}+(/${SEGMENT})*|)${QUERY_FRAGMENT}`;
// RFC 3987: an IRI is a URI that may also hold non-ASCII characters where unreserved ones go.
// (ucschar: planes 1 to 14 without their last two code points; iprivate, the private-use characters, in a query.)
const UCS_PLANES = Array.from(
  { length: 14 },
  (_, i) => `\\u{${(i + 1).toString(16)}0000}-\\u{${(i + 1).toString(16)}fffd}`,
).join('');
const IPRIVATE = '\\ue000-\\uf8ff\\u{f0000}-\\u{ffffd}\\u{100000}-\\u{10fffd}';
const iri = (re: string): string =>
  re
    .split(QUERY_FRAGMENT)
    .join(`(\\?(${PCHAR}|[/?${IPRIVATE}])*)?(#(${PCHAR}|[/?])*)?`)
    .split(UNRESERVED)
    .join(`[a-zA-Z0-9._~\\u00a0-\\ud7ff\\uf900-\\ufdcf\\ufdf0-\\uffef${UCS_PLANES}-]`);
// RFC 3339 appendix A.
const DUR_TIME = 'T([0-9]+H([0-9]+M([0-9]+S)?)?|[0-9]+M([0-9]+S)?|[0-9]+S)';
const DUR_DATE = `([0-9]+D|[0-9]+M([0-9]+D)?|[0-9]+Y([0-9]+M([0-9]+D)?)?)(${DUR_TIME})?`;
const DURATION = `P(${DUR_DATE}|${DUR_TIME}|[0-9]+W)`;
const B64 = '[A-Za-z0-9+/]';
const UUID = '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}';

export const FORMAT_PATTERNS: Readonly<Record<string, string>> = {
  date: DATE,
  time: TIME,
  'date-time': `${DATE}[tT]${TIME}`,
  ipv4: IPV4,
  ipv6: IPV6,
  email: EMAIL,
  uri: URI,
  uuid: UUID,
  'uri-reference': `(${URI}|${RELATIVE})`,
  iri: iri(URI),
  'iri-reference': iri(`(${URI}|${RELATIVE})`),
  duration: DURATION,
  'json-pointer': '(/([^~/]|~[01])*)*',
  // OpenAPI's base64 string.
  byte: `(${B64}{4})*(${B64}{2}==|${B64}{3}=)?`,
};

/** The anchored regex of a format, or undefined for a format the engine does not know. */
export function formatPattern(format: string): string | undefined {
  const body = Object.hasOwn(FORMAT_PATTERNS, format) ? FORMAT_PATTERNS[format] : undefined;
  return body === undefined ? undefined : `^${body}$`;
}
