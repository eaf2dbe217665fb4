export { createMetrics } from './create-metrics.ts';
export type { ErrorSource, Metrics, MetricsOptions, TokenKind } from './create-metrics.ts';
export { registerMetricsRoute } from './metrics-route.ts';
