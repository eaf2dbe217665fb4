/** Whether a tool's result is an async iterable (an `async function*` execute, a stream): not a value to send. */
export function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function'
  );
}

/**
 * The last value an async iterable yields, as the AI SDK takes a streaming tool's final output (its generator
 * object crossed as {} before, with nothing to say so); undefined when it yields none. Stops when the call is
 * cancelled.
 */
export async function finalOutput(values: AsyncIterable<unknown>, signal: AbortSignal): Promise<unknown> {
  let last: unknown;
  for await (const value of values) {
    signal.throwIfAborted();
    last = value;
  }
  return last;
}
