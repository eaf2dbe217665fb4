import type { Command } from 'commander';
import { serviceConfigSchema } from '../service/config.ts';

/** Keys with no flag of their own: a secret's value on the command line shows in `ps` (a file flag reads it). */
const NO_FLAG = new Set(['metricsToken']);

/**
 * Gives `serve` a flag for every config key the command does not spell out itself (`maxStreamsPerKey` ->
 * `--max-streams-per-key <value>`), so a new key is never reachable only from the environment. The value is
 * checked by the config schema, like the environment's and the file's (docs/config.md lists them all).
 */
export function addConfigFlags(command: Command): Command {
  const taken = new Set(command.options.map((o) => o.attributeName()));
  for (const [key, schema] of Object.entries(serviceConfigSchema.shape)) {
    if (taken.has(key) || NO_FLAG.has(key)) continue;
    const flag = `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
    const isSwitch = schema.safeParse(true).success && !schema.safeParse('x').success;
    const byDefault: unknown = schema.safeParse(undefined).data;
    const about = `config key ${key}, default ${JSON.stringify(byDefault)} (docs/config.md)`;
    if (isSwitch && byDefault === true) command.option(`--no-${flag.slice(2)}`, `turns ${about} off`);
    else if (isSwitch) command.option(flag, about);
    else command.option(`${flag} <value>`, about);
  }
  return command;
}
