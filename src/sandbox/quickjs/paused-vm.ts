import { formatCallId } from '../../spec/index.ts';
import type { PausedVm } from '../../spec/index.ts';
import type { PreparedVm } from './prepared-vm.ts';
import type { PausedImage } from './protocol.ts';

/** A paused VM's image as the driver hands it out (ExecutionResult.paused). */
export function pausedVm(image: PausedImage, engine: string): PausedVm {
  return {
    engine,
    bytes: image.memory.byteLength,
    outCalls: image.out.map((c) => formatCallId({ n: c.callId })),
    toolCalls: image.toolCalls,
    state: image,
  };
}

/**
 * The image in a `resumeFrom`, or why it cannot be resumed here (another engine's, or not one this driver
 * made). Its memory is handed over to the worker: a kept VM resumes once.
 */
export function pausedImageOf(paused: PausedVm, engine: string): PausedImage | string {
  if (paused.engine !== engine) return `a VM paused by ${paused.engine} cannot resume on ${engine}`;
  const image = paused.state as Partial<PausedImage> | null;
  if (
    image === null ||
    typeof image !== 'object' ||
    !(image.memory instanceof Uint8Array) ||
    image.memory.buffer.byteLength === 0 ||
    !Array.isArray(image.out)
  ) {
    return 'resumeFrom is not a paused VM of this driver, or it was resumed already';
  }
  return image as PausedImage;
}

/**
 * The image of `vm` between guest turns with the host side of its execution, or null when it is over `maxBytes`
 * or cannot be taken (then the task replays).
 */
export function imageOf(
  vm: PreparedVm,
  maxBytes: number,
  host: Omit<
    PausedImage,
    'memory' | 'stackPointer' | 'runtimePtr' | 'contextPtr' | 'deliverToken' | 'memoryBytes' | 'clockMs'
  >,
): PausedImage | null {
  let taken: ReturnType<PreparedVm['image']>;
  try {
    if (vm.vm.getAllocatedSize() > maxBytes) return null;
    taken = vm.image();
  } catch {
    return null;
  }
  const { snapshot, deliverToken } = taken;
  if (snapshot.memory.byteLength > maxBytes || snapshot.extensions.length > 0) return null;
  return {
    memory: snapshot.memory,
    stackPointer: snapshot.stackPointer,
    runtimePtr: snapshot.runtimePtr,
    contextPtr: snapshot.contextPtr,
    deliverToken,
    memoryBytes: vm.memoryBytes,
    clockMs: vm.clockMs,
    ...host,
  };
}
