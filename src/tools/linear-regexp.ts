import { RE2JS } from 're2js';

/** What ajv needs of a pattern engine (its RegExpEngine): a compiler with a `code` name for generated code. */
interface PatternEngine {
  (pattern: string, flags: string): { test(s: string): boolean; toString(): string };
  code: string;
}

/**
 * Tool schemas' `pattern` and `patternProperties` run against guest strings on the host's main thread, so they
 * are matched by RE2 (re2js): time linear in the input, whatever the pattern (`^(a+)+$` included). What RE2 cannot
 * run in linear time (lookahead, backreferences) does not compile: the schema is refused when the tool is defined.
 */
export const linearRegExp: PatternEngine = Object.assign(
  (pattern: string) => {
    let re: RE2JS;
    try {
      re = RE2JS.compile(RE2JS.translateRegExp(pattern));
    } catch (cause) {
      throw new Error(
        `pattern ${JSON.stringify(pattern)} is not supported (patterns are matched in linear time by RE2, ` +
          `without lookaround or backreferences): ${(cause as Error).message}`,
      );
    }
    // ajv keys compiled patterns by toString(): one per pattern.
    return { test: (s: string) => re.test(s), toString: () => `re2:${pattern}` };
  },
  { code: 'linearRegExp' },
);
