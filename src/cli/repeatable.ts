/** commander's option parser for a repeatable flag: each use adds its value. */
export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}
