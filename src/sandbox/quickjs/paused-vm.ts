import { formatCallId } from '../../spec/index.ts';
import type { PausedVm } from '../../spec/index.ts';
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
