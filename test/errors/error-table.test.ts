import { describe, expect, it } from 'vitest';
import { CodecallError, ERROR_CODES, errorRow, failure, httpStatusFor } from '../../src/errors/index.ts';
import { GUEST_VALUES } from '../../src/sandbox/python/guest-values.ts';
import { GUEST_RUNTIME_SOURCE } from '../../src/sandbox/quickjs/guest-runtime.ts';

const rows = Object.entries(ERROR_CODES);

describe('the error table', () => {
  it('builds a failure named as its row says, with details only when given', () => {
    expect(failure('TOOL_REJECTED', 'no')).toStrictEqual({
      code: 'TOOL_REJECTED',
      name: 'ToolRejectedError',
      message: 'no',
    });
    expect(failure('TIMEOUT', 'late', { ms: 5 })).toStrictEqual({
      code: 'TIMEOUT',
      name: 'Error',
      message: 'late',
      details: { ms: 5 },
    });
  });

  it('gives CodecallError.retryable from the row', () => {
    expect(new CodecallError('STORE_ERROR', 'busy').retryable).toBe(true);
    expect(new CodecallError('MODEL_UNAVAILABLE', 'down').retryable).toBe(true);
    expect(new CodecallError('STORE_CLOSED', 'closed').retryable).toBe(false);
    expect(new CodecallError('GUEST_ERROR', 'threw').retryable).toBe(false);
  });

  it('knows no row of a foreign code: no decision reads one, its status is 500', () => {
    expect(errorRow('E_BOOM')).toBeUndefined();
    expect(errorRow('toString')).toBeUndefined();
    expect(httpStatusFor('E_BOOM')).toBe(500);
    expect(httpStatusFor('NOT_FOUND')).toBe(404);
  });

  it('ends an agent run on every code that pauses (a pause is never fed back to the model)', () => {
    const pausing = rows.filter(([, r]) => r.pauses).map(([code]) => code);
    expect(pausing.length).toBeGreaterThan(0);
    for (const code of pausing) expect(errorRow(code)?.endsRun, code).toBe(true);
  });

  it('names tool failures with the classes both guest runtimes define, each known by its code in Python', () => {
    const toolNames = new Set(rows.filter(([, r]) => r.kind === 'tool').map(([, r]) => r.name));
    const quickjs = new Set(
      [...GUEST_RUNTIME_SOURCE.matchAll(/^class (\w+) extends (?:E|ToolError) \{/gm)].map((m) => m[1]),
    );
    const python = new Set(
      [...GUEST_VALUES.matchAll(/^class (\w+)\((?:Exception|ToolError)\)/gm)].map((m) => m[1]),
    );
    expect(quickjs).toEqual(toolNames);
    expect(python).toEqual(toolNames);
    // Python's fallback when an outcome has no known name: a tool row's own class, by code.
    const byCode = /_BY_CODE = \{([^}]*)\}/.exec(GUEST_VALUES)?.[1] ?? '';
    const pairs = Object.fromEntries(
      [...byCode.matchAll(/'([A-Z_]+)': (\w+)/g)].map((m): [string, string] => [m[1] ?? '', m[2] ?? '']),
    );
    const special = rows.filter(([, r]) => r.kind === 'tool' && r.name !== 'ToolError');
    expect(pairs).toEqual(Object.fromEntries(special.map(([code, r]) => [code, r.name])));
  });

  it('believes from a guest only codes that drive no decision of the runner', () => {
    const believed = rows.filter(([, r]) => r.fromGuest);
    expect(believed.map(([c]) => c)).toContain('GUEST_ERROR');
    for (const [code, r] of believed) {
      expect([r.pauses, r.endsRun, r.retryable, r.transient], code).toEqual([false, false, false, false]);
      expect(['guest', 'tool', 'limit'], code).toContain(r.kind);
    }
    // The limits the host counts itself, and every pause, cancel and failure of the machinery, are the host's.
    for (const code of ['TIMEOUT', 'CPU_LIMIT', 'OUTPUT_LIMIT', 'TOOL_CALL_LIMIT', 'RESULT_LIMIT'] as const)
      expect(ERROR_CODES[code].fromGuest, code).toBe(false);
    for (const [code, r] of rows)
      if (r.kind === 'control' || r.kind === 'infrastructure') expect(r.fromGuest, code).toBe(false);
  });

  it("names no failure but a tool call's with a tool class", () => {
    for (const [code, r] of rows) {
      if (r.kind !== 'tool') expect(r.name, code).toMatch(/^(Error|SyntaxError|RangeError)$/);
    }
  });
});
