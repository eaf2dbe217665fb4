import { CodecallError } from '../errors/index.ts';
import {
  PROVIDER_PRESETS,
  isModelProvider,
  MODEL_PROVIDERS,
  type ModelProvider,
} from './provider-presets.ts';

/** The model options as the CLI or a task gives them (`--provider --base-url --model --api-key`). */
export interface ModelFlags {
  readonly provider?: string;
  readonly baseUrl?: string;
  readonly model?: string;
  readonly apiKey?: string;
}

/** Enough to build a client with createOpenAiClient. */
export interface ModelConfig {
  readonly provider: ModelProvider;
  readonly baseUrl: string;
  readonly model: string;
  readonly apiKey?: string;
}

export type ModelEnv = Readonly<Record<string, string | undefined>>;

export const NO_MODEL_CONFIGURED =
  'No model is configured, so instruction tasks cannot run (code tasks can). Set MISTRAL_API_KEY or ' +
  'OPENAI_API_KEY (and OPENAI_BASE_URL for another OpenAI-compatible server), or pass --provider ' +
  `(${MODEL_PROVIDERS.join('|')}) with --base-url, --model and --api-key as needed.`;

export function noModelConfiguredError(): CodecallError {
  return new CodecallError('MODEL_NOT_CONFIGURED', NO_MODEL_CONFIGURED);
}

/**
 * The model config from flags, then the environment (passed in: this never reads process.env); null when
 * neither names a model. Flags win; of the variables, an OpenAI one wins over MISTRAL_API_KEY.
 * Throws INVALID_CONFIG for a config that is there but unusable.
 */
export function modelConfigFrom(env: ModelEnv, flags: ModelFlags = {}): ModelConfig | null {
  const flag = {
    provider: given(flags.provider),
    baseUrl: given(flags.baseUrl),
    model: given(flags.model),
    apiKey: given(flags.apiKey),
  };
  const openAiKey = given(env.OPENAI_API_KEY);
  const openAiBaseUrl = given(env.OPENAI_BASE_URL);
  const mistralKey = given(env.MISTRAL_API_KEY);
  const anyFlag = Object.values(flag).some((value) => value !== undefined);

  let provider: ModelProvider;
  if (flag.provider !== undefined) {
    if (!isModelProvider(flag.provider)) {
      throw invalid(`unknown model provider "${flag.provider}" (one of ${MODEL_PROVIDERS.join(', ')})`);
    }
    provider = flag.provider;
  } else if (flag.baseUrl?.includes('mistral.ai') === true) provider = 'mistral';
  else if (openAiKey !== undefined || openAiBaseUrl !== undefined) provider = 'openai';
  else if (mistralKey !== undefined) provider = 'mistral';
  else if (anyFlag) provider = 'openai';
  else return null;

  const preset = PROVIDER_PRESETS[provider];
  const envBaseUrl = provider === 'mistral' ? undefined : openAiBaseUrl;
  const baseUrl = flag.baseUrl ?? envBaseUrl ?? preset.defaultBaseUrl;
  // A local server behind OPENAI_BASE_URL may still want the key configured beside it.
  const envKey =
    provider === 'mistral' ? mistralKey : provider === 'openai' || envBaseUrl ? openAiKey : undefined;
  const apiKey = flag.apiKey ?? envKey;
  if (preset.requiresApiKey && apiKey === undefined && baseUrl === preset.defaultBaseUrl) {
    const variable = provider === 'mistral' ? 'MISTRAL_API_KEY' : 'OPENAI_API_KEY';
    throw invalid(`the ${provider} provider needs an API key: pass --api-key or set ${variable}`);
  }
  const model = flag.model ?? preset.defaultModel;
  if (model === undefined) throw invalid(`the ${provider} provider needs a model name: pass --model`);
  try {
    new URL(baseUrl);
  } catch {
    throw invalid(`the model base URL "${baseUrl}" is not a URL`);
  }
  return apiKey === undefined ? { provider, baseUrl, model } : { provider, baseUrl, model, apiKey };
}

function given(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === '' ? undefined : trimmed;
}

function invalid(message: string): CodecallError {
  return new CodecallError('INVALID_CONFIG', message);
}
