import { defineTool } from 'codecall';
import { z } from 'zod';

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(new Error('aborted'));
    });
  });

const FORECASTS: Record<string, { temperature_c: number; sky: string }> = {
  paris: { temperature_c: 14, sky: 'cloudy' },
  tokyo: { temperature_c: 21, sky: 'clear' },
  lima: { temperature_c: 18, sky: 'fog' },
};

export default [
  defineTool({
    name: 'get_weather',
    description: 'Current weather for a city (takes about 200 ms).',
    input: z.object({ city: z.string().min(1).describe('City name, e.g. "Paris"') }),
    output: z.object({ city: z.string(), temperature_c: z.number(), sky: z.string() }),
    effect: 'read',
    async execute({ city }, ctx) {
      await sleep(200, ctx.signal);
      const forecast = FORECASTS[city.toLowerCase()];
      if (!forecast) throw Object.assign(new Error(`unknown city ${city}`), { code: 'UNKNOWN_CITY' });
      return { city, ...forecast };
    },
  }),
  defineTool({
    name: 'convert_temperature',
    description: 'Converts Celsius to Fahrenheit.',
    input: {
      type: 'object',
      properties: { celsius: { type: 'number' } },
      required: ['celsius'],
      additionalProperties: false,
    },
    effect: 'read',
    execute: ({ celsius }: { celsius: number }) => ({ fahrenheit: Math.round((celsius * 9) / 5 + 32) }),
  }),
];
