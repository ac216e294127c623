/**
 * The room-token secret in the chart (issue 12, M3): a previous secret for rotations, given to the
 * gateway only, and renders that never change a secret when it lives in an existing Secret (GitOps).
 */
import { field, findObject, helmTemplateRaw, renderChart, type KubeObject } from './helm-cli';

interface EnvVar { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean } } }

const envOf = (objects: KubeObject[], suffix: string): EnvVar[] =>
  (field(findObject(objects, 'Deployment', suffix), 'spec.template.spec.containers') as { env: EnvVar[] }[])[0]?.env ?? [];
const secretData = (objects: KubeObject[]): Record<string, string> =>
  Object.fromEntries(Object.entries(field(findObject(objects, 'Secret', '-room-token'), 'data') as Record<string, string>).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]));

describe('chart room-token secret', () => {
  it('gives the gateway, and only the gateway, the optional previous secret', async () => {
    const objects = await renderChart();
    const previous = envOf(objects, '-gateway').find((e) => e.name === 'ROOMKEEPER_ROOM_TOKEN_PREVIOUS_SECRET');
    expect(previous?.valueFrom?.secretKeyRef).toEqual({ name: 'rk-roomkeeper-room-token', key: 'previous-token-secret', optional: true });
    expect(envOf(objects, '-operator').map((e) => e.name)).not.toContain('ROOMKEEPER_ROOM_TOKEN_PREVIOUS_SECRET');
    expect(Object.keys(secretData(objects))).toEqual(['token-secret']);
  });

  it('writes both secrets during a rotation', async () => {
    const objects = await renderChart({ values: { roomToken: { secret: 'new-secret', previousSecret: 'old-secret' } } });
    expect(secretData(objects)).toEqual({ 'token-secret': 'new-secret', 'previous-token-secret': 'old-secret' });
  });

  it('with an existing Secret renders none, so every render is the same (the GitOps path); without one each offline render generates a new secret', async () => {
    const values = { roomToken: { existingSecret: 'my-room-token' }, auth: { existingSecret: 'my-credentials' } };
    const [a, b] = await Promise.all([helmTemplateRaw({ values }), helmTemplateRaw({ values })]);
    expect(a.code).toBe(0);
    expect(a.stdout).toBe(b.stdout);
    const objects = await renderChart({ values });
    expect(objects.filter((o) => o.kind === 'Secret')).toEqual([]);
    expect(envOf(objects, '-gateway').find((e) => e.name === 'ROOMKEEPER_ROOM_TOKEN_PREVIOUS_SECRET')?.valueFrom?.secretKeyRef?.name).toBe('my-room-token');
    // Why the GitOps path matters: `lookup` sees no cluster under `helm template`.
    const [c, d] = await Promise.all([renderChart(), renderChart()]);
    expect(secretData(c)['token-secret']).not.toBe(secretData(d)['token-secret']);
  });
});
