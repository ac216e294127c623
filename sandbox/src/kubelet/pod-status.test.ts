import type { V1Pod } from '@kubernetes/client-node';
import type { ContainerBehaviour } from './pod-behaviour';
import { computePodStatus, normalizedImage, podPhaseOf, type PodStatusInput } from './pod-status';

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);

function pod(restartPolicy = 'Never', containers = ['game']): V1Pod {
  return {
    metadata: { name: 'room-1', namespace: 'fleet', uid: 'uid-1' },
    spec: { restartPolicy, containers: containers.map((name) => ({ name, image: 'game:1.0' })) },
  };
}

function at(nowMs: number, behaviours: ContainerBehaviour[], p = pod(), extra: Partial<PodStatusInput> = {}) {
  return computePodStatus({
    pod: p, behaviours, boundAtMs: T0, nowMs, startDelayMs: 200, backoffMs: 1000, hostIP: '10.240.0.10', podIP: '10.200.0.2', ...extra,
  });
}

function cond(status: ReturnType<typeof at>['status'], type: string) {
  return status.conditions.find((c) => c.type === type);
}

describe('computePodStatus', () => {
  it('reports ContainerCreating before the start delay, then Running and ready', () => {
    const creating = at(T0 + 100, [{ kind: 'normal' }]);
    expect(creating.status.phase).toBe('Pending');
    expect(creating.status.containerStatuses[0]?.state).toEqual({ waiting: { reason: 'ContainerCreating' } });
    expect(creating.status.podIP).toBeUndefined();
    expect(creating.status.hostIP).toBe('10.240.0.10');
    expect(creating.nextChangeAtMs).toBe(T0 + 200);
    expect(cond(creating.status, 'Ready')).toMatchObject({ status: 'False', reason: 'ContainersNotReady', message: 'containers with unready status: [game]' });

    const running = at(T0 + 200, [{ kind: 'normal' }]);
    expect(running.status.phase).toBe('Running');
    expect(running.nextChangeAtMs).toBeUndefined();
    const cs = running.status.containerStatuses[0];
    expect(cs).toMatchObject({ name: 'game', ready: true, started: true, restartCount: 0, image: 'game:1.0', state: { running: { startedAt: '2026-01-01T12:00:00Z' } } });
    expect(cs?.imageID).toMatch(/^docker\.io\/library\/game@sha256:[0-9a-f]{64}$/);
    expect(cs?.containerID).toMatch(/^containerd:\/\/[0-9a-f]{64}$/);
    expect(running.status.podIP).toBe('10.200.0.2');
    expect(running.status.startTime).toBe('2026-01-01T12:00:00Z');
    expect(running.status.conditions.map((c) => `${c.type}=${c.status}`)).toEqual([
      'PodReadyToStartContainers=True', 'Initialized=True', 'Ready=True', 'ContainersReady=True', 'PodScheduled=True',
    ]);
  });

  it('goes straight to Running when the start delay is 0', () => {
    expect(at(T0, [{ kind: 'normal' }], pod(), { startDelayMs: 0 }).status.phase).toBe('Running');
  });

  it('never-ready: Running but not Ready', () => {
    const s = at(T0 + 5000, [{ kind: 'never-ready' }]).status;
    expect(s.phase).toBe('Running');
    expect(s.containerStatuses[0]).toMatchObject({ ready: false, started: true });
    expect(cond(s, 'Ready')).toMatchObject({ status: 'False', reason: 'ContainersNotReady' });
  });

  it('image-pull-failure: ErrImagePull, then ImagePullBackOff, pod stays Pending', () => {
    const first = at(T0 + 300, [{ kind: 'image-pull-failure' }]);
    expect(first.status.phase).toBe('Pending');
    expect(first.status.containerStatuses[0]?.state.waiting?.reason).toBe('ErrImagePull');
    expect(first.status.containerStatuses[0]?.state.waiting?.message).toContain('failed to pull and unpack image "docker.io/library/game:1.0"');
    expect(first.nextChangeAtMs).toBe(T0 + 1200);
    const later = at(T0 + 1200, [{ kind: 'image-pull-failure' }]);
    expect(later.status.containerStatuses[0]?.state.waiting).toEqual({ reason: 'ImagePullBackOff', message: 'Back-off pulling image "game:1.0"' });
    expect(later.nextChangeAtMs).toBeUndefined();
  });

  it('crash-loop with restartPolicy Never: terminated with exit code 1, phase Failed', () => {
    const s = at(T0 + 200, [{ kind: 'exit', afterMs: 0, exitCode: 1 }]).status;
    expect(s.phase).toBe('Failed');
    expect(s.containerStatuses[0]?.state.terminated).toMatchObject({ exitCode: 1, reason: 'Error' });
    expect(s.containerStatuses[0]?.restartCount).toBe(0);
    expect(cond(s, 'Ready')).toMatchObject({ status: 'False', reason: 'PodFailed' });
  });

  it('crash-loop with restartPolicy Always: CrashLoopBackOff, restartCount grows, phase Running', () => {
    const crash: ContainerBehaviour[] = [{ kind: 'exit', afterMs: 0, exitCode: 1 }];
    const first = at(T0 + 200, crash, pod('Always'));
    expect(first.status.phase).toBe('Running');
    const cs = first.status.containerStatuses[0];
    expect(cs?.state.waiting?.reason).toBe('CrashLoopBackOff');
    expect(cs?.state.waiting?.message).toBe('back-off 1s restarting failed container=game pod=room-1_fleet(uid-1)');
    expect(cs?.lastState.terminated).toMatchObject({ exitCode: 1, reason: 'Error' });
    expect(cs?.restartCount).toBe(1);
    expect(first.nextChangeAtMs).toBe(T0 + 1200);
    expect(at(T0 + 2250, crash, pod('Always')).status.containerStatuses[0]?.restartCount).toBe(3);
    expect(cond(first.status, 'Ready')).toMatchObject({ status: 'False', reason: 'ContainersNotReady' });
  });

  it('exit-after with code 0 and Never: Running, then Succeeded with reason Completed', () => {
    const exit: ContainerBehaviour[] = [{ kind: 'exit', afterMs: 1000, exitCode: 0 }];
    const running = at(T0 + 500, exit);
    expect(running.status.phase).toBe('Running');
    expect(running.nextChangeAtMs).toBe(T0 + 1200);
    const done = at(T0 + 1200, exit).status;
    expect(done.phase).toBe('Succeeded');
    expect(done.containerStatuses[0]?.state.terminated).toMatchObject({ exitCode: 0, reason: 'Completed' });
    expect(cond(done, 'Ready')).toMatchObject({ status: 'False', reason: 'PodCompleted' });
  });

  it('exit-after with a non-zero code and OnFailure restarts; code 0 with OnFailure succeeds', () => {
    const failing: ContainerBehaviour[] = [{ kind: 'exit', afterMs: 1000, exitCode: 2 }];
    const restarted = at(T0 + 200 + 2000 + 100, failing, pod('OnFailure')).status;
    expect(restarted.phase).toBe('Running');
    expect(restarted.containerStatuses[0]).toMatchObject({ restartCount: 1, state: { running: {} }, lastState: { terminated: { exitCode: 2 } } });
    expect(at(T0 + 5000, [{ kind: 'exit', afterMs: 1000, exitCode: 0 }], pod('OnFailure')).status.phase).toBe('Succeeded');
  });

  it('one failing container among several fails a Never pod only when all have stopped', () => {
    const p = pod('Never', ['game', 'sidecar']);
    const behaviours: ContainerBehaviour[] = [{ kind: 'exit', afterMs: 0, exitCode: 1 }, { kind: 'normal' }];
    expect(at(T0 + 500, behaviours, p).status.phase).toBe('Running');
    expect(at(T0 + 500, [{ kind: 'exit', afterMs: 0, exitCode: 1 }, { kind: 'exit', afterMs: 0, exitCode: 0 }], p).status.phase).toBe('Failed');
  });

  it('a stopped (deleted) pod has its running containers terminated with exit code 0', () => {
    const s = at(T0 + 3000, [{ kind: 'normal' }], pod('Always'), { stoppedAtMs: T0 + 3000 });
    expect(s.status.phase).toBe('Succeeded');
    expect(s.status.containerStatuses[0]?.state.terminated).toMatchObject({ exitCode: 0, reason: 'Completed', finishedAt: '2026-01-01T12:00:03Z' });
    expect(s.nextChangeAtMs).toBeUndefined();
  });

  it('is a pure function of its inputs', () => {
    expect(JSON.stringify(at(T0 + 700, [{ kind: 'normal' }]))).toBe(JSON.stringify(at(T0 + 700, [{ kind: 'normal' }])));
  });
});

describe('podPhaseOf', () => {
  const waiting = { name: 'c', image: '', imageID: '', ready: false, started: false, restartCount: 0, lastState: {}, state: { waiting: { reason: 'ContainerCreating' } } };
  it('is Pending while a container waits without having run', () => {
    expect(podPhaseOf([waiting], 'Always')).toBe('Pending');
  });
});

describe('normalizedImage', () => {
  it.each([
    ['nginx', 'docker.io/library/nginx:latest'],
    ['org/game:1', 'docker.io/org/game:1'],
    ['ghcr.io/org/game:1', 'ghcr.io/org/game:1'],
    ['localhost/game', 'localhost/game:latest'],
  ])('%s -> %s', (image, expected) => expect(normalizedImage(image)).toBe(expected));
});

describe('computePodStatus with conditions from others', () => {
  it('keeps foreign conditions and holds Ready on readiness gates', () => {
    const p = pod();
    p.spec!.readinessGates = [{ conditionType: 'roomkeeper.io/ready' }];
    const noGate = at(T0 + 500, [{ kind: 'normal' }], p).status;
    expect(cond(noGate, 'ContainersReady')?.status).toBe('True');
    expect(cond(noGate, 'Ready')).toMatchObject({
      status: 'False', reason: 'ReadinessGatesNotReady', message: 'corresponding condition of pod readiness gate "roomkeeper.io/ready" does not exist.',
    });
    p.status = { conditions: [{ type: 'roomkeeper.io/ready', status: 'True', lastTransitionTime: new Date(T0 + 300) }] };
    const gated = at(T0 + 500, [{ kind: 'normal' }], p).status;
    expect(cond(gated, 'Ready')?.status).toBe('True');
    expect(cond(gated, 'roomkeeper.io/ready')).toMatchObject({ status: 'True', lastTransitionTime: '2026-01-01T12:00:00Z' });
  });
});
