// Webhook delivery from the store's outbox. Decisions: nothing is sent unsigned (the dispatcher requires a secret;
// a service without one must refuse callback_url at submission); targets are vetted at submission (URL shape) and
// at each attempt (every resolved address), and the connection is pinned to the vetted addresses; at least once:
// an attempt cut short by close() is not recorded, so it is sent again after a restart (receivers dedupe on
// webhook-id). One dispatcher per outbox: two would both send each due message.
export {
  DEFAULT_TOLERANCE_SECONDS,
  newWebhookSecret,
  signWebhook,
  verifyWebhook,
  webhookKey,
} from './sign-webhook.ts';
export type { HeaderSource, WebhookHeaders } from './sign-webhook.ts';
export { checkWebhookUrl, refusedAddressReason, resolveWebhookTarget } from './webhook-target.ts';
export type { LookupAll, WebhookTarget, WebhookTargetOptions } from './webhook-target.ts';
export { buildWebhookBody } from './webhook-body.ts';
export type { BatchWebhookData, TaskWebhookData, WebhookBodyStore, WebhookPayload } from './webhook-body.ts';
export { postWebhook } from './post-webhook.ts';
export type { PostResult } from './post-webhook.ts';
export { webhookRetryDelay } from './webhook-backoff.ts';
export { attemptOutcome, attemptWebhook } from './deliver-webhook.ts';
export type { AttemptResult } from './deliver-webhook.ts';
export {
  createWebhookDispatcher,
  DEFAULT_WEBHOOK_BASE_DELAY_MS,
  DEFAULT_WEBHOOK_CONCURRENCY,
  DEFAULT_WEBHOOK_MAX_AGE_MS,
  DEFAULT_WEBHOOK_MAX_DELAY_MS,
  DEFAULT_WEBHOOK_POLL_MS,
  DEFAULT_WEBHOOK_TIMEOUT_MS,
} from './webhook-dispatcher.ts';
export type {
  WebhookDispatcher,
  WebhookDispatcherOptions,
  WebhookDispatcherStore,
  WebhookLogger,
} from './webhook-dispatcher.ts';
