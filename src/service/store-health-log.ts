import type { StoreHealthEvent } from '../spec/index.ts';

/** The log line of a health event: each fault once, its recovery once; null for the rest. */
export function healthLine(event: StoreHealthEvent): string | null {
  if (event.type === 'fault') {
    return `ERROR: store ${event.fault.kind} (${event.fault.code}): ${event.fault.message}`;
  }
  if (event.type === 'recovered') {
    const first = Math.min(...event.faults.map((f) => f.since));
    const kinds = event.faults.map((f) => f.kind).join(', ');
    return `store recovered: it commits again (after ${kinds}, ${((event.at - first) / 1000).toFixed(1)} s)`;
  }
  return null;
}
