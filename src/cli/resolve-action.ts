import { CodecallError } from '../errors/index.ts';

/** The action of `tasks resolve`, checked before anything is read (here or over HTTP). */
export function resolveAction(action: string, options: { result?: string }): 'retry' | 'skip' | 'fail' {
  if (action !== 'retry' && action !== 'skip' && action !== 'fail') {
    throw new CodecallError('INVALID_ARGUMENT', 'the action must be retry, skip or fail');
  }
  if (action === 'skip' && options.result === undefined) {
    throw new CodecallError('INVALID_ARGUMENT', 'skip needs --result JSON: the outcome the program will see');
  }
  return action;
}
