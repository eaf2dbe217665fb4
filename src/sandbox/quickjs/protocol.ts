import type { MessagePort } from 'node:worker_threads';
import type { PreparedProgram } from './transpile.ts';
import type { WorkerReplayStep } from './worker-replay.ts';
import type {
  ExecutionLimits,
  GuestLanguage,
  GuestToolBinding,
  LogLevel,
  SerializedError,
} from '../../spec/index.ts';

/** Messages from the pool (main thread) to a sandbox worker. */
export type ToWorker =
  | {
      type: 'start';
      execId: number;
      slot: number;
      code: string;
      language: GuestLanguage;
      filename: string;
      tools: readonly GuestToolBinding[];
      limits: ExecutionLimits;
      seed: number;
      clockMs: number;
      /** Outcomes the worker serves itself (ExecutionRequest.replay), in delivery order. */
      replay?: WorkerReplayStep[];
      /** The program prepared on the type-stripping thread (TypeScript, large JavaScript), or its SyntaxError. */
      stripped?: PreparedProgram;
      /** Keep the VM if the execution is aborted for a pause, when its image is at most this many bytes. */
      keepPaused?: number;
      /** Resume this paused VM instead of running the program (ADR 0056). */
      resume?: PausedImage;
    }
  | { type: 'deliver'; execId: number; callId: number; ok: boolean; payload: string; clockMs: number }
  | { type: 'abort'; execId: number; code: string; message: string };

export interface WorkerResultResources {
  memoryBytes: number;
  toolCalls: number;
  /** Time spent inside the interpreter. */
  cpuMs: number;
}

/** Messages from a sandbox worker to the pool. */
export type FromWorker =
  | { type: 'ready' }
  /** `tool` indexes the request's tool bindings; -1 is a timer whose payload is the delay. */
  | {
      type: 'call';
      execId: number;
      callId: number;
      tool: number;
      payload: string;
      /** The arguments were over `toolArgumentBytes`: `payload` is empty, this is their size and digest. */
      tooLarge?: { bytes: number; sha256: string };
    }
  | { type: 'log'; execId: number; level: LogLevel; message: string }
  /** The guest gave up on call `callId` (fetch's signal aborted): the host may stop it. */
  | { type: 'cancel'; execId: number; callId: number }
  /** The replay script's last outcome is being delivered: what follows is live. */
  | { type: 'replayDone'; execId: number }
  | {
      type: 'done';
      execId: number;
      ok: boolean;
      /** Tagged JSON of the result when ok. */
      payload: string;
      error: (SerializedError & { line?: number; column?: number }) | null;
      resources: WorkerResultResources;
      /** How long the execution's VM took to create and to dispose (absent when it never had one). */
      vm?: { createMs: number; disposeMs: number };
      /** The VM as it paused (`start.keepPaused`). */
      paused?: PausedImage;
    };

/** A call the guest issued and the host had not answered when the VM paused: it is issued again on resume. */
export interface OutCall {
  callId: number;
  tool: number;
  payload: string;
  tooLarge?: { bytes: number; sha256: string };
}

/** A paused VM's memory image and the host side of its execution (vm-execution.ts), to resume it. */
export interface PausedImage {
  memory: Uint8Array;
  stackPointer: number;
  runtimePtr: number;
  contextPtr: number;
  /** The runtime's `deliver` handle, exported into the image. */
  deliverToken: number;
  memoryBytes: number;
  clockMs: number;
  nextCallId: number;
  toolCalls: number;
  guestMs: number;
  logBytes: number;
  peakMemory: number;
  out: OutCall[];
  /** Out calls that read stored bodies (never journaled). */
  direct: number[];
}

export interface WorkerInit {
  /** The channel for every message in both directions. */
  port: MessagePort;
  /** One Int32 slot per concurrent execution; non-zero asks that execution to stop at once. */
  interruptFlags: SharedArrayBuffer;
  warmVms: number;
  defaultMemoryBytes: number;
  /** How long a worker polls for a tool call's answer before sleeping; 0 disables polling. */
  spinMicros: number;
  /** The thread's nice value (Linux; 0 leaves it as it is): guests' CPU yields to the main thread's. */
  nice: number;
}
