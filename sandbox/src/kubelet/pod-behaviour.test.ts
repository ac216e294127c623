import { behaviourFromImage, containerBehaviour, InvalidBehaviourError, parseContainerBehaviour } from './pod-behaviour';

describe('parseContainerBehaviour', () => {
  it.each([
    ['', { kind: 'normal' }],
    ['normal', { kind: 'normal' }],
    ['never-ready', { kind: 'never-ready' }],
    ['image-pull-failure', { kind: 'image-pull-failure' }],
    ['crash-loop', { kind: 'exit', afterMs: 0, exitCode: 1 }],
    ['exit-after:2', { kind: 'exit', afterMs: 2000, exitCode: 0 }],
    ['exit-after:0.25:3', { kind: 'exit', afterMs: 250, exitCode: 3 }],
    [' exit-after:1:255 ', { kind: 'exit', afterMs: 1000, exitCode: 255 }],
  ])('%j -> %j', (value, expected) => {
    expect(parseContainerBehaviour(value)).toEqual(expected);
  });

  it.each(['explode', 'exit-after', 'exit-after:x', 'exit-after:1:256', 'exit-after:1:2:3', 'exit-after:-1'])('rejects %j', (value) => {
    expect(() => parseContainerBehaviour(value)).toThrow(InvalidBehaviourError);
  });
});

describe('behaviourFromImage', () => {
  it.each([
    ['nginx', undefined],
    ['nginx:1.27', undefined],
    ['registry.local:5000/game:imagepullbackoff', { kind: 'image-pull-failure' }],
    ['game:image-pull-failure', { kind: 'image-pull-failure' }],
    ['game:crashloop', { kind: 'exit', afterMs: 0, exitCode: 1 }],
    ['game:never-ready', { kind: 'never-ready' }],
    ['registry.local:5000/game', undefined],
  ])('%j -> %j', (image, expected) => {
    expect(behaviourFromImage(image)).toEqual(expected);
  });
});

describe('containerBehaviour', () => {
  it('prefers the env var over the image tag', () => {
    expect(containerBehaviour({ name: 'c', image: 'game:crashloop', env: [{ name: 'ROOMKEEPER_SIM_POD', value: 'never-ready' }] })).toEqual({ kind: 'never-ready' });
  });

  it('falls back to normal and reports a bad value', () => {
    const bad: string[] = [];
    expect(containerBehaviour({ name: 'c', env: [{ name: 'ROOMKEEPER_SIM_POD', value: 'boom' }] }, (e) => bad.push(e.value))).toEqual({ kind: 'normal' });
    expect(bad).toEqual(['boom']);
  });
});
