/**
 * `BENCH_LOAD=0.5`: a calibrated CPU burner beside every system, so the benchmark also says what a busy machine
 * (a production service by definition) does to each number. One burner process per core, each taking `share` of
 * a core by its own CPU clock (load-burner.ts), so together they take `share` of the machine. Their CPU is read
 * from /proc, so the share they achieved while each system ran is reported, not assumed.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const TICKS_PER_SECOND = 100;

/** The share of the machine asked for by BENCH_LOAD (0 < share < 1), or null for a quiet run. */
export function loadFromEnv(value = process.env.BENCH_LOAD): number | null {
  if (value === undefined || value === '' || value === '0') return null;
  const share = Number(value);
  if (!(share > 0 && share < 1)) throw new Error(`BENCH_LOAD must be a number between 0 and 1, got ${value}`);
  return share;
}

function ticksOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat
      .slice(stat.lastIndexOf(')') + 2)
      .split(' ')
      .map(Number);
    return (f[11] ?? 0) + (f[12] ?? 0);
  } catch {
    return 0;
  }
}

export interface LoadMark {
  ticks: number;
  at: number;
}

export class CpuLoad {
  private constructor(
    readonly share: number,
    private readonly burners: ChildProcess[],
  ) {}

  /** Starts the burners and waits until they run at their share (one calibration window, printed). */
  static async start(share: number): Promise<CpuLoad> {
    const cores = os.availableParallelism();
    const burners = Array.from({ length: cores }, () =>
      spawn(process.execPath, ['--import', 'tsx', path.join(here, 'load-burner.ts'), String(share)], {
        stdio: ['pipe', 'inherit', 'inherit'],
      }),
    );
    const load = new CpuLoad(share, burners);
    // tsx and node start-up first, then one window to show the share is what was asked for.
    await sleep(1500);
    const mark = load.mark();
    await sleep(2000);
    console.log(
      `load: ${cores} burner processes asked for ${(share * 100).toFixed(0)}% of the machine; calibration window: ${(load.shareSince(mark) * 100).toFixed(1)}%`,
    );
    return load;
  }

  mark(): LoadMark {
    return {
      ticks: this.burners.reduce((sum, b) => sum + (b.pid ? ticksOf(b.pid) : 0), 0),
      at: performance.now(),
    };
  }

  /** Share of the machine's CPU the burners took since `mark`. */
  shareSince(mark: LoadMark): number {
    const now = this.mark();
    const capacity = ((now.at - mark.at) / 1000) * TICKS_PER_SECOND * os.availableParallelism();
    return capacity > 0 ? (now.ticks - mark.ticks) / capacity : 0;
  }

  async stop(): Promise<void> {
    await Promise.all(
      this.burners.map(
        (b) =>
          new Promise<void>((resolve) => {
            if (b.exitCode !== null || b.signalCode !== null) return resolve();
            b.once('exit', () => resolve());
            b.kill('SIGTERM');
          }),
      ),
    );
  }
}
