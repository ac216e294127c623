/**
 * How a simulated container behaves, chosen by the pod itself.
 *
 * Grammar of the env var `ROOMKEEPER_SIM_POD` (plain `value`, read per container):
 *
 *   normal                  runs and becomes ready (the default)
 *   never-ready             runs but never passes readiness (Ready=False)
 *   image-pull-failure      never starts: ErrImagePull, then ImagePullBackOff
 *   crash-loop              exits with code 1 as soon as it starts (same as exit-after:0:1)
 *   exit-after:<s>          runs <s> seconds (fractions allowed), then exits with code 0
 *   exit-after:<s>:<code>   runs <s> seconds, then exits with <code>
 *
 * What happens after an exit follows the pod's `restartPolicy` as a kubelet does: `Never` leaves
 * the container terminated (phase Succeeded or Failed); `Always`, and `OnFailure` with a non-zero
 * code, restart it after a back-off (waiting `CrashLoopBackOff`, `restartCount` increments).
 *
 * Without the env var, the image tag decides: `...:imagepullbackoff` or `...:image-pull-failure`,
 * `...:crashloop` or `...:crash-loop`, `...:never-ready`. Anything else is `normal`.
 */
import type { V1Container } from '@kubernetes/client-node';
import { envValue } from './pod-fields';

const SIM_POD_ENV = 'ROOMKEEPER_SIM_POD';

export type ContainerBehaviour =
  | { kind: 'normal' }
  | { kind: 'never-ready' }
  | { kind: 'image-pull-failure' }
  | { kind: 'exit'; afterMs: number; exitCode: number };

const NORMAL: ContainerBehaviour = Object.freeze({ kind: 'normal' });

export class InvalidBehaviourError extends Error {
  constructor(readonly value: string, reason: string) {
    super(`invalid ${SIM_POD_ENV} value ${JSON.stringify(value)}: ${reason}`);
    this.name = 'InvalidBehaviourError';
  }
}

function parseSeconds(value: string, text: string): number {
  if (!/^\d+(\.\d+)?$/.test(text)) throw new InvalidBehaviourError(value, `${JSON.stringify(text)} is not a number of seconds`);
  return Math.round(Number(text) * 1000);
}

/** Parses a `ROOMKEEPER_SIM_POD` value; throws InvalidBehaviourError on anything else. */
export function parseContainerBehaviour(value: string): ContainerBehaviour {
  const text = value.trim();
  const [name, ...args] = text.split(':');
  switch (name) {
    case '':
    case 'normal':
      return NORMAL;
    case 'never-ready':
      return { kind: 'never-ready' };
    case 'image-pull-failure':
      return { kind: 'image-pull-failure' };
    case 'crash-loop':
      return { kind: 'exit', afterMs: 0, exitCode: 1 };
    case 'exit-after': {
      if (args.length < 1 || args.length > 2) throw new InvalidBehaviourError(value, 'expected exit-after:<seconds>[:<code>]');
      const afterMs = parseSeconds(value, args[0] ?? '');
      const codeText = args[1] ?? '0';
      if (!/^\d{1,3}$/.test(codeText) || Number(codeText) > 255) throw new InvalidBehaviourError(value, `${JSON.stringify(codeText)} is not an exit code`);
      return { kind: 'exit', afterMs, exitCode: Number(codeText) };
    }
    default:
      throw new InvalidBehaviourError(value, `unknown behaviour ${JSON.stringify(name)}`);
  }
}

/** The behaviour an image tag asks for, or undefined. */
export function behaviourFromImage(image: string | undefined): ContainerBehaviour | undefined {
  if (!image) return undefined;
  const lastSlash = image.lastIndexOf('/');
  const colon = image.indexOf(':', lastSlash + 1);
  if (colon < 0) return undefined;
  const tag = image.slice(colon + 1).split('@')[0]?.toLowerCase();
  switch (tag) {
    case 'imagepullbackoff':
    case 'image-pull-failure':
      return { kind: 'image-pull-failure' };
    case 'crashloop':
    case 'crash-loop':
      return { kind: 'exit', afterMs: 0, exitCode: 1 };
    case 'never-ready':
      return { kind: 'never-ready' };
    default:
      return undefined;
  }
}

/**
 * The behaviour of one container. A bad env value falls back to `normal` and is reported through
 * `onInvalid`, so a typo never stops the simulator.
 */
export function containerBehaviour(container: V1Container, onInvalid?: (err: InvalidBehaviourError) => void): ContainerBehaviour {
  const value = envValue(container, SIM_POD_ENV);
  if (value !== undefined) {
    try {
      return parseContainerBehaviour(value);
    } catch (err) {
      if (err instanceof InvalidBehaviourError) {
        onInvalid?.(err);
        return NORMAL;
      }
      throw err;
    }
  }
  return behaviourFromImage(container.image) ?? NORMAL;
}
