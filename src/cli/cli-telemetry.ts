import { OTEL_DEFAULTS, otelSettings } from '../service/config-otel.ts';

/**
 * Runs a command (`exec`, `run`) with tracing when the standard OTEL_* variables ask for it (ADR 0053): the SDK
 * is loaded only then, and its buffered spans are exported before the command returns.
 */
export async function withCliTelemetry<T>(
  env: Readonly<Record<string, string | undefined>>,
  run: () => Promise<T>,
): Promise<T> {
  const settings = otelSettings(OTEL_DEFAULTS, env);
  if (settings === null) return run();
  const { startTelemetry } = await import('../service/telemetry-provider.ts');
  const telemetry = startTelemetry(settings);
  try {
    return await run();
  } finally {
    await telemetry?.shutdown();
  }
}
