import { receiveMessageOnPort } from 'node:worker_threads';
import type { MessagePort } from 'node:worker_threads';

/** Index of the bell the main thread rings after posting to the worker, and of the one the worker rings back. */
export const TO_WORKER = 0;
export const TO_MAIN = 1;
/** Two bells, then per bell a flag set while its receiver sleeps on it. */
export const BELLS = 4;
const SLEEPING = 2;

/**
 * The longest a waiter spins before it sleeps on the bell, within its window (spinMicros, mainSpinMicros). A quick
 * tool's answer on quiet cores comes in ~10-30 us; past that, a wake-up (~25 us here) is cheaper than the core.
 */
export const SPIN_PHASE_MICROS = 25;

/** A waiter that has stopped spinning still spins one wait in this many, to find out whether answers turned quick. */
export const SPIN_PROBE_EVERY = 16;

/**
 * A counter beside a MessagePort, rung (incremented and notified) after every post, so the receiving thread can
 * wait for the next message in Atomics.wait (a futex: it sleeps, and wakes when rung) instead of spinning on the
 * port. On a busy machine a spinning thread took the core the other side needed to answer (ADR 0055); a thread
 * sleeping on the bell gives it up and is still woken directly, without a turn of its event loop.
 */
export function ring(bells: Int32Array, index: number): void {
  Atomics.add(bells, index, 1);
  // Atomics.notify takes a mutex V8 shares between every thread of the process: only when someone sleeps. A
  // receiver that sets its flag after this load reads the bell after it too, and does not sleep (both are SC).
  if (Atomics.load(bells, index + SLEEPING) !== 0) Atomics.notify(bells, index);
}

/**
 * Whether the last answer came within the spin phase: spinning pays only while the other side answers before
 * the spin would end (quiet cores); otherwise it only burns a core, and the waiter goes straight to the bell. A
 * wait that slept measures the wake-up too, so a waiter that stopped spinning spins one wait in SPIN_PROBE_EVERY
 * to find out whether the other side turned quick.
 */
export class SpinPolicy {
  #quick = true;
  #sinceProbe = 0;

  constructor(readonly spinMs: number) {}

  get spinFor(): number {
    if (this.#quick) return this.spinMs;
    this.#sinceProbe += 1;
    if (this.#sinceProbe < SPIN_PROBE_EVERY) return 0;
    this.#sinceProbe = 0;
    return this.spinMs;
  }

  observe(waitedMs: number): void {
    this.#quick = waitedMs <= this.spinMs;
  }
}

/**
 * The next message on `port` within `windowMs`, else undefined: polled for `policy.spinFor`, then slept for on
 * the bell. Only the port is read: a ring without a message (or a message read by an earlier poll) just loops.
 */
export function awaitMessage(
  port: MessagePort,
  bells: Int32Array,
  index: number,
  policy: SpinPolicy,
  windowMs: number,
): { message: unknown } | undefined {
  const start = performance.now();
  const spinUntil = start + Math.min(policy.spinFor, windowMs);
  const end = start + windowMs;
  for (;;) {
    const received = receiveMessageOnPort(port);
    if (received) {
      policy.observe(performance.now() - start);
      return received;
    }
    const now = performance.now();
    if (now >= end) {
      policy.observe(now - start);
      return undefined;
    }
    if (now < spinUntil) continue;
    // Say we sleep, then read the bell before looking at the port once more: a post after that look rings a value
    // we have not seen (and sees the flag), so the wait returns at once.
    Atomics.store(bells, index + SLEEPING, 1);
    const seen = Atomics.load(bells, index);
    const late = receiveMessageOnPort(port);
    if (late) {
      Atomics.store(bells, index + SLEEPING, 0);
      policy.observe(performance.now() - start);
      return late;
    }
    Atomics.wait(bells, index, seen, end - now);
    Atomics.store(bells, index + SLEEPING, 0);
  }
}
