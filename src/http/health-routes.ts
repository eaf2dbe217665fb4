import type { Runtime } from '../api/index.ts';
import { CodecallError } from '../errors/index.ts';
import type { StoreFault, TaskStore } from '../spec/index.ts';

/**
 * GET /healthz is liveness: 200 while the process answers (restarting it cures no store fault), its body
 * `degraded` with the store's open faults as last seen, without probing.
 */
export async function liveness(
  store: TaskStore,
  runtime?: Pick<Runtime, 'loopFault'>,
): Promise<Record<string, unknown>> {
  const health = await store.checkHealth?.({ probe: false }).catch(() => null);
  // The runtime's loop failing round after round claims nothing: said here, not by readiness (the API still answers).
  const fault = runtime?.loopFault?.() ?? null;
  const loop = fault && {
    loop: {
      message: fault.message,
      code: fault.code,
      since: new Date(fault.since).toISOString(),
      failures: fault.failures,
    },
  };
  if ((!health || health.ok) && !loop) return { status: 'ok' };
  return {
    status: 'degraded',
    ...(health && !health.ok ? { store: { faults: health.faults.map(faultView) } } : {}),
    ...loop,
  };
}

/**
 * GET /readyz: ready while the owner says so (a closing service is not) and the store can commit (its write
 * probe, cached about a second); 503 SHUTDOWN, STORE_UNAVAILABLE (what is wrong and what to do) or STORE_CLOSED.
 * A store without a health check is ready while it answers a read.
 */
export async function readiness(options: {
  readonly store: TaskStore;
  readonly ready?: () => boolean;
  /** True while the service is starting (its sandboxes not ready yet): 503 STARTING. */
  readonly starting?: () => boolean;
}): Promise<{ status: 'ready' }> {
  if (options.ready && !options.ready()) {
    throw new CodecallError('SHUTDOWN', 'the service is shutting down', { details: {} });
  }
  if (options.starting?.()) {
    throw new CodecallError('STARTING', 'the service is starting: its sandboxes are not ready yet', {
      details: {},
    });
  }
  const { store } = options;
  if (!store.checkHealth) {
    await store.getTask('readyz-probe');
    return { status: 'ready' };
  }
  const health = await store.checkHealth();
  const [fault] = health.faults;
  if (fault) {
    throw new CodecallError('STORE_UNAVAILABLE', `the store cannot commit: ${fault.message}`, {
      details: {
        kind: fault.kind,
        // Named for SQLite's codes; another store's code (a PostgreSQL SQLSTATE) is in `faults`.
        ...(fault.code.startsWith('SQLITE_') ? { sqliteCode: fault.code } : {}),
        faults: health.faults.map(faultView),
      },
    });
  }
  return { status: 'ready' };
}

function faultView(fault: StoreFault): Record<string, unknown> {
  return {
    kind: fault.kind,
    code: fault.code,
    message: fault.message,
    since: new Date(fault.since).toISOString(),
  };
}
