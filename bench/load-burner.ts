/**
 * One CPU burner process for `BENCH_LOAD` (load.ts starts one per core): it spins in short duty cycles so that it
 * uses `share` of one core, measured by its own CPU time rather than assumed from wall time. When the core is
 * contended (the benchmark wants it too) a spin of a given wall time yields less CPU, so the burner spins longer
 * until it has taken its share: the load is the one asked for, not whatever a fixed duty cycle happens to get.
 * Usage: node bench/load-burner.ts <share 0..1>   (plain JavaScript-compatible TypeScript: no tsx needed)
 */
const share = Number(process.argv[2]);
if (!(share > 0 && share < 1)) {
  console.error('usage: load-burner.ts <share strictly between 0 and 1>');
  process.exit(2);
}

/** A short period keeps the load smooth at the scale of a benchmark sample (a cold start is ~0.5 ms). */
const PERIOD_MS = 10;
/** CPU owed but not yet taken is carried at most this far, so a burner never bursts to catch up. */
const MAX_DEBT_MS = PERIOD_MS;

const cpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

let owed = 0;
let next = performance.now();
const tick = (): void => {
  owed = Math.min(owed + share * PERIOD_MS, MAX_DEBT_MS + share * PERIOD_MS);
  const startCpu = cpuMs();
  const periodEnd = next + PERIOD_MS;
  // Spin until this period's share of CPU is taken, or the period is over (the rest is carried, bounded).
  while (cpuMs() - startCpu < owed && performance.now() < periodEnd) {
    // busy
  }
  owed = Math.max(0, owed - (cpuMs() - startCpu));
  next = periodEnd;
  const now = performance.now();
  if (next < now) next = now;
  setTimeout(tick, next - now);
};
tick();

// The parent's stdin closes when it exits, whatever way: no orphaned burner keeps spinning.
process.stdin.on('end', () => process.exit(0));
process.stdin.on('error', () => process.exit(0));
process.stdin.resume();
