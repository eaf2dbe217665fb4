import { describe, expect, it } from 'vitest';
import { modelConfigFrom, NO_MODEL_CONFIGURED, noModelConfiguredError } from './model-config.ts';

describe('modelConfigFrom', () => {
  it('is null when neither flags nor environment name a model', () => {
    expect(modelConfigFrom({})).toBeNull();
    expect(modelConfigFrom({ OPENAI_API_KEY: '  ' }, { model: '' })).toBeNull();
  });

  it('reads MISTRAL_API_KEY as the mistral preset', () => {
    expect(modelConfigFrom({ MISTRAL_API_KEY: 'mk' })).toEqual({
      provider: 'mistral',
      baseUrl: 'https://api.mistral.ai/v1',
      model: 'mistral-small-latest',
      apiKey: 'mk',
    });
  });

  it('reads OPENAI_API_KEY and OPENAI_BASE_URL, preferring them over MISTRAL_API_KEY', () => {
    expect(modelConfigFrom({ OPENAI_API_KEY: 'ok', MISTRAL_API_KEY: 'mk' })).toEqual({
      provider: 'openai',
      baseUrl: 'https://api.openai.com/v1',
      model: 'gpt-4o-mini',
      apiKey: 'ok',
    });
    expect(modelConfigFrom({ OPENAI_BASE_URL: 'http://127.0.0.1:9000/v1' })).toEqual({
      provider: 'openai',
      baseUrl: 'http://127.0.0.1:9000/v1',
      model: 'gpt-4o-mini',
    });
  });

  it('lets flags win over the environment', () => {
    expect(
      modelConfigFrom(
        { OPENAI_API_KEY: 'ok', MISTRAL_API_KEY: 'mk' },
        { provider: 'mistral', model: 'mistral-large-latest', apiKey: 'flag-key' },
      ),
    ).toEqual({
      provider: 'mistral',
      baseUrl: 'https://api.mistral.ai/v1',
      model: 'mistral-large-latest',
      apiKey: 'flag-key',
    });
    expect(
      modelConfigFrom({ MISTRAL_API_KEY: 'mk' }, { baseUrl: 'https://api.mistral.ai/v1' })?.provider,
    ).toBe('mistral');
  });

  it('configures a local server without a key but with a model', () => {
    expect(modelConfigFrom({ MISTRAL_API_KEY: 'mk' }, { provider: 'ollama', model: 'qwen2.5' })).toEqual({
      provider: 'ollama',
      baseUrl: 'http://127.0.0.1:11434/v1',
      model: 'qwen2.5',
    });
    expect(() => modelConfigFrom({}, { provider: 'vllm' })).toThrow(/--model/);
  });

  it('rejects an unknown provider, a missing key and a bad URL with INVALID_CONFIG', () => {
    expect(() => modelConfigFrom({}, { provider: 'acme' })).toThrow(
      expect.objectContaining({ code: 'INVALID_CONFIG' }),
    );
    expect(() => modelConfigFrom({}, { provider: 'mistral' })).toThrow(/MISTRAL_API_KEY/);
    expect(() => modelConfigFrom({}, { provider: 'vllm', model: 'm', baseUrl: 'not a url' })).toThrow(
      /not a URL/,
    );
  });

  it('says how to configure a model', () => {
    expect(NO_MODEL_CONFIGURED).toMatch(/MISTRAL_API_KEY.*OPENAI_API_KEY.*--provider/s);
    expect(noModelConfiguredError().code).toBe('MODEL_NOT_CONFIGURED');
  });
});
