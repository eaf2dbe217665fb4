import { describe, expect, it } from 'vitest';
import { CodecallError } from '../errors/index.ts';
import { CONFLICT_RETRY, retryOnConflict } from './conflict-retry.ts';

const conflict = (): CodecallError => new CodecallError('VERSION_CONFLICT', 'changed meanwhile');

describe('retryOnConflict', () => {
  it('tries again after a version conflict and returns the first success', async () => {
    let tries = 0;
    const value = await retryOnConflict({ attempts: 3 }, () => {
      tries++;
      return tries < 3 ? Promise.reject(conflict()) : Promise.resolve('done');
    });
    expect(value).toBe('done');
    expect(tries).toBe(3);
  });

  it('lets the last conflict through once the attempts are used up', async () => {
    let tries = 0;
    const last = conflict();
    const run = retryOnConflict(CONFLICT_RETRY, () => {
      tries++;
      return Promise.reject(tries === CONFLICT_RETRY.attempts ? last : conflict());
    });
    await expect(run).rejects.toBe(last);
    expect(tries).toBe(6);
  });

  it('gives any other error back at once', async () => {
    let tries = 0;
    const refused = new CodecallError('ILLEGAL_TRANSITION', 'not paused');
    await expect(
      retryOnConflict(CONFLICT_RETRY, () => {
        tries++;
        return Promise.reject(refused);
      }),
    ).rejects.toBe(refused);
    expect(tries).toBe(1);
  });
});
