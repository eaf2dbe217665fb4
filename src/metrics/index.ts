export { createMetrics } from './create-metrics.ts';
export type { ErrorSource, Metrics, MetricsOptions, TokenKind } from './create-metrics.ts';
export { registerMetricsRoute } from './metrics-route.ts';
export type { MetricsRouteOptions } from './metrics-route.ts';
