import type { BenchSystem } from '../system.ts';

export interface SystemEntry {
  readonly id: string;
  /** Extra node flags for the process that measures this system. */
  readonly nodeFlags: readonly string[];
  /** Builds the system, or returns why it cannot run here. Imports lazily so one system's code never loads in another's process. */
  load(): Promise<BenchSystem | string>;
}

/** Every system, in report order. codecall comes first: its failure is the one that fails the run. */
export const SYSTEMS: readonly SystemEntry[] = [
  {
    id: 'codecall',
    nodeFlags: [],
    load: async () => (await import('./codecall.ts')).createCodecallSystem(),
  },
  {
    id: 'codecall-tools-array',
    nodeFlags: [],
    load: async () => (await import('./codecall.ts')).createCodecallSystem({ toolsArrayPerCall: true }),
  },
  {
    id: 'run',
    nodeFlags: [],
    load: async () => (await import('./run.ts')).createRunSystem(),
  },
  {
    id: 'isolated-vm',
    nodeFlags: ['--no-node-snapshot'],
    load: async () => {
      const { loadIsolatedVm, createIsolatedVmSystem } = await import('./isolated-vm.ts');
      const ivm = await loadIsolatedVm();
      return typeof ivm === 'string' ? ivm : createIsolatedVmSystem(ivm);
    },
  },
  {
    id: 'node-vm',
    nodeFlags: [],
    load: async () => (await import('./node-vm.ts')).createNodeVmSystem(),
  },
  {
    id: 'node-spawn',
    nodeFlags: [],
    load: async () => (await import('./node-spawn.ts')).createNodeSpawnSystem(),
  },
];

export const CODECALL_ID = 'codecall';
export const RUN_ID = 'run';
