/**
 * What `/healthz` and `/readyz` answer, the same in the operator (`ops-server.ts`) and the gateway
 * (`api-gateway/src/routes/health-routes.ts`): JSON with one entry per check, saying whether it
 * passes, what it sees and, for one that fails, what it means and what to do.
 *
 * `/healthz` (liveness): 200 `{status: 'ok', checks}`, or 503 `{status: 'unhealthy', failing,
 * checks, whatToDo}`; `failing` lists the failing checks with since when and what they mean.
 * `/readyz` (readiness): 200 `{status: 'ready', checks}`, or 503 `{status: 'not ready', reason,
 * checks}`; `reason` joins the reasons of the checks that are not ready. A check that `gates: false` is shown but does
 * not make `/readyz` answer 503 (the gateway's API server check: it serves from its caches meanwhile).
 */
import { LIVENESS_WHAT_TO_DO, type CheckState, type FailingCheck, type Liveness } from './runtime/liveness';

export interface ReadinessCheck {
  name: string;
  /** Undefined when this check is ready; otherwise why not and what to do. */
  notReadyReason(): string | undefined;
  /** False: shown in the answer, but it never makes `/readyz` answer 503 (default true). */
  gates?: boolean;
  /** Why a failing check that does not gate leaves the process ready (shown with it). */
  whyStillReady?: string;
}

export interface ReadinessState {
  check: string;
  ready: boolean;
  /** Why not ready and what to do (when not ready). */
  reason?: string;
  /** A failing check that does not gate readiness: why the process is ready all the same. */
  stillReadyBecause?: string;
}

export type HealthzBody =
  | { status: 'ok'; checks: CheckState[] }
  | { status: 'unhealthy'; failing: FailingCheck[]; checks: CheckState[]; whatToDo: string };

export type ReadyzBody =
  | { status: 'ready'; checks: ReadinessState[] }
  | { status: 'not ready'; reason: string; checks: ReadinessState[] };

export interface HealthAnswer<B> { statusCode: 200 | 503; body: B }

/** The `/healthz` answer: 503 when a liveness check fails; 200 without checks when there are none. */
export function healthzAnswer(liveness: Liveness | undefined): HealthAnswer<HealthzBody> {
  const report = liveness?.report() ?? { ok: true, failing: [], checks: [] };
  if (report.ok) return { statusCode: 200, body: { status: 'ok', checks: report.checks } };
  return { statusCode: 503, body: { status: 'unhealthy', failing: report.failing, checks: report.checks, whatToDo: LIVENESS_WHAT_TO_DO } };
}

/** The `/readyz` answer: 503 when a check that gates readiness is not ready. */
export function readyzAnswer(checks: readonly ReadinessCheck[]): HealthAnswer<ReadyzBody> {
  const states: ReadinessState[] = [];
  const blocking: string[] = [];
  for (const c of checks) {
    const reason = c.notReadyReason();
    if (reason === undefined) {
      states.push({ check: c.name, ready: true });
      continue;
    }
    const gates = c.gates !== false;
    if (gates) blocking.push(reason);
    states.push({ check: c.name, ready: false, reason, ...(!gates && c.whyStillReady ? { stillReadyBecause: c.whyStillReady } : {}) });
  }
  if (blocking.length === 0) return { statusCode: 200, body: { status: 'ready', checks: states } };
  return { statusCode: 503, body: { status: 'not ready', reason: blocking.join('; '), checks: states } };
}
