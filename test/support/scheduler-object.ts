/** A Scheduler object for tests: one container, one UDP port, a port range. */
export function schedulerObject(name: string, overrides: Record<string, unknown> = {}, containerEnv: { name: string; value: string }[] = []): Record<string, unknown> {
  return {
    apiVersion: 'roomkeeper.io/v1',
    kind: 'Scheduler',
    metadata: { name },
    spec: {
      game: 'test-game',
      maxSurge: 3,
      roomsReplicas: 2,
      portRange: { start: 20000, end: 30000 },
      spec: {
        terminationGracePeriod: '10s',
        containers: [{
          name: 'server',
          image: 'example.com/game:1.0.0',
          imagePullPolicy: 'IfNotPresent',
          command: ['/run'],
          environment: containerEnv,
          requests: { memory: '64Mi', cpu: '50m' },
          limits: { memory: '128Mi', cpu: '100m' },
          ports: [{ name: 'game', protocol: 'UDP', port: 7777 }],
        }],
      },
      ...overrides,
    },
  };
}
