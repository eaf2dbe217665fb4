import { describe, expect, it } from 'vitest';
import { isoTime } from './iso-time.ts';

describe('isoTime', () => {
  it('is toISOString for every millisecond of a day boundary and for random times from 1970 to 9999', () => {
    const boundary = Date.UTC(2026, 11, 6);
    for (let ms = boundary - 2000; ms < boundary + 2000; ms++)
      expect(isoTime(ms)).toBe(new Date(ms).toISOString());
    let seed = 1;
    const random = (): number => (seed = (seed * 48271) % 2147483647) / 2147483647;
    for (let i = 0; i < 20_000; i++) {
      const ms = Math.floor(random() * 253_402_300_799_999);
      expect(isoTime(ms)).toBe(new Date(ms).toISOString());
    }
    for (const ms of [0, 1, 999, 1000, 59_999, 3_599_999, 86_399_999, 951_782_400_000, 253_402_300_799_999])
      expect(isoTime(ms)).toBe(new Date(ms).toISOString());
  });

  it('leaves what it does not compute to Date: before 1970, after 9999, fractions', () => {
    for (const ms of [-1, -86_400_001, 253_402_300_800_000, 8.64e15, 1.5])
      expect(isoTime(ms)).toBe(new Date(ms).toISOString());
    expect(() => isoTime(Number.NaN)).toThrow(RangeError);
  });
});
