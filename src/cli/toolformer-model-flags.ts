import { readFile } from 'node:fs/promises';
import { CodecallError } from '../errors/index.ts';
import {
  createCompletionsSampler,
  createPromptLogprobsClient,
  modelConfigFrom,
  type CompletionsSampler,
  type PromptLogprobsClient,
} from '../model/index.ts';
import { DEFAULT_TOOLFORMER_TAU, type SamplingOptions } from '../toolformer/index.ts';
import { integerOption } from './number-options.ts';

/** The flags `toolformer sample` and `run` share: the model server and the sampling options. */
export interface ToolformerModelFlags {
  provider?: string;
  baseUrl?: string;
  model?: string;
  apiKey?: string;
  tool: string[];
  prompt?: string[];
  threshold?: string;
  k?: string;
  m?: string;
  temperature?: string;
  concurrency?: string;
}

/** Top alternatives asked for when reading P([) at each position: a marker outside them counts as 0. */
const POSITION_TOP_LOGPROBS = 10;

export interface ToolformerModel {
  readonly positionsClient: PromptLogprobsClient;
  readonly scoringClient: PromptLogprobsClient;
  readonly sampler: CompletionsSampler;
  readonly sampling: SamplingOptions;
  readonly concurrency: number;
  /** Provider and model: a run's shards are named by them too (another model's answers are not this one's). */
  readonly identity: { readonly provider: string; readonly model: string };
}

export async function toolformerModelOf(
  options: ToolformerModelFlags,
  env: Readonly<Record<string, string | undefined>>,
): Promise<ToolformerModel> {
  const config = modelConfigFrom(env, {
    provider: options.provider ?? 'vllm',
    ...(options.baseUrl === undefined ? {} : { baseUrl: options.baseUrl }),
    ...(options.model === undefined ? {} : { model: options.model }),
    ...(options.apiKey === undefined ? {} : { apiKey: options.apiKey }),
  });
  if (config === null) throw new CodecallError('INVALID_CONFIG', 'give --base-url and --model of the model');
  if (options.tool.length === 0)
    throw new CodecallError('INVALID_ARGUMENT', 'name a tool to sample calls for (--tool NAME)');
  const http = {
    baseUrl: config.baseUrl,
    model: config.model,
    provider: config.provider,
    ...(config.apiKey === undefined ? {} : { apiKey: config.apiKey }),
  };
  const prompts: Record<string, string> = {};
  for (const entry of options.prompt ?? []) {
    const eq = entry.indexOf('=');
    if (eq <= 0) throw new CodecallError('INVALID_ARGUMENT', `--prompt takes TOOL=FILE, not "${entry}"`);
    const file = entry.slice(eq + 1);
    try {
      prompts[entry.slice(0, eq)] = await readFile(file, 'utf8');
    } catch (error) {
      throw new CodecallError('INVALID_ARGUMENT', `cannot read ${file}: ${(error as Error).message}`);
    }
  }
  const number = (flag: string, text: string | undefined, min: number, max: number): number | undefined => {
    if (text === undefined) return undefined;
    const n = Number(text);
    if (!(n >= min && n <= max))
      throw new CodecallError('INVALID_ARGUMENT', `${flag} must be a number in [${min}, ${max}]`);
    return n;
  };
  const threshold = number('--threshold', options.threshold, 0, 1);
  const temperature = number('--temperature', options.temperature, 0, 2);
  const sampling: SamplingOptions = {
    prompts,
    ...(threshold === undefined ? {} : { threshold }),
    ...(temperature === undefined ? {} : { temperature }),
    ...(options.k === undefined ? {} : { topK: integerOption('--k', options.k, { min: 0, max: 100 }) }),
    ...(options.m === undefined
      ? {}
      : { callsPerPosition: integerOption('--m', options.m, { min: 1, max: 64 }) }),
  };
  return {
    positionsClient: createPromptLogprobsClient({ ...http, topLogprobs: POSITION_TOP_LOGPROBS }),
    scoringClient: createPromptLogprobsClient(http),
    sampler: createCompletionsSampler(http),
    sampling,
    identity: { provider: config.provider, model: config.model },
    concurrency:
      options.concurrency === undefined
        ? 4
        : integerOption('--concurrency', options.concurrency, { min: 1, max: 256 }),
  };
}

/** --tau, or the paper's 1.0. */
export function tauOf(text: string | undefined): number {
  const tau = text === undefined ? DEFAULT_TOOLFORMER_TAU : Number(text);
  if (!Number.isFinite(tau)) throw new CodecallError('INVALID_ARGUMENT', '--tau must be a number');
  return tau;
}
