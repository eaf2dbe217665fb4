import { randomBytes } from 'node:crypto';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

let lastTime = '';
let lastRandom: number[] = [];

/**
 * `task_` + a 26-char ULID (10 chars of ms time, 16 random). Monotonic within a process: an id made in the same
 * millisecond as the previous one increments its random part, so ids sort in creation order and tasks created in
 * one instant are listed and claimed FIFO.
 */
export function newTaskId(now: number = Date.now()): string {
  let time = '';
  let t = Math.max(0, Math.floor(now));
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD.charAt(t % 32) + time;
    t = Math.floor(t / 32);
  }
  if (time === lastTime && increment(lastRandom)) {
    return `task_${time}${lastRandom.map((d) => CROCKFORD.charAt(d)).join('')}`;
  }
  // Top bit clear, so at least 2^79 increments fit in one millisecond.
  lastRandom = [...randomBytes(16)].map((byte, i) => (i === 0 ? byte % 16 : byte % 32));
  lastTime = time;
  return `task_${time}${lastRandom.map((d) => CROCKFORD.charAt(d)).join('')}`;
}

/** Adds one to base-32 digits in place; false when they overflow. */
function increment(digits: number[]): boolean {
  for (let i = digits.length - 1; i >= 0; i--) {
    const d = digits[i] ?? 0;
    if (d < 31) {
      digits[i] = d + 1;
      return true;
    }
    digits[i] = 0;
  }
  return false;
}
