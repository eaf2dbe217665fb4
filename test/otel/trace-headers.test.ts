import { describe, expect, it } from 'vitest';
import { parseTraceHeaders } from '../../src/telemetry/index.ts';

describe('parseTraceHeaders', () => {
  it('takes a W3C traceparent (lower-cased) and a bounded tracestate', () => {
    expect(parseTraceHeaders('00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01', 'a=1')).toEqual({
      traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      tracestate: 'a=1',
    });
    expect(parseTraceHeaders(undefined, 'a=1')).toBeNull();
    // An over-long tracestate is dropped (the spec lets a receiver drop it), the traceparent kept.
    expect(
      parseTraceHeaders('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00', 'x'.repeat(600)),
    ).toEqual({
      traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00',
    });
    // A later version is read by its first four fields.
    expect(
      parseTraceHeaders('01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra', undefined),
    ).toEqual({
      traceparent: '01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    });
  });

  it.each([
    ['garbage'],
    ['00-00000000000000000000000000000000-00f067aa0ba902b7-01'],
    ['00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01'],
    ['ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'],
    ['00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra'],
    [['00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01']],
    ['x'.repeat(100_000)],
  ])('refuses %j with INVALID_ARGUMENT', (value) => {
    expect(() => parseTraceHeaders(value, undefined)).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
    );
  });
});
