import { loadConfig } from '../../../common/src/config';
import { roomNamespaceLabels, unlabelledNamespaceWords } from './room-namespace';

describe('roomNamespaceLabels (issue 12 L5)', () => {
  const ours = { 'roomkeeper.io/scheduler': 'arena', 'app.kubernetes.io/managed-by': 'roomkeeper' };

  it('by default warns at restricted and audits at baseline, and enforces nothing (baseline refuses hostPort)', () => {
    expect(roomNamespaceLabels('arena', loadConfig({}))).toEqual({
      ...ours, 'pod-security.kubernetes.io/warn': 'restricted', 'pod-security.kubernetes.io/audit': 'baseline',
    });
  });

  it('takes each level from the settings and leaves out those set to none', () => {
    const config = loadConfig({ ROOMKEEPER_ROOM_NAMESPACE_PSA_ENFORCE: 'baseline', ROOMKEEPER_ROOM_NAMESPACE_PSA_WARN: 'restricted' }, { roomNamespacePsaAudit: 'none' });
    expect(roomNamespaceLabels('arena', config)).toEqual({
      ...ours, 'pod-security.kubernetes.io/enforce': 'baseline', 'pod-security.kubernetes.io/warn': 'restricted',
    });
  });

  it('refuses a level Pod Security Admission does not know, naming the setting', () => {
    expect(() => loadConfig({ ROOMKEEPER_ROOM_NAMESPACE_PSA_ENFORCE: 'strict' })).toThrow(/ROOMKEEPER_ROOM_NAMESPACE_PSA_ENFORCE: expected privileged, baseline, restricted or none, got "strict"/);
  });
});

describe('unlabelledNamespaceWords', () => {
  it('names only the labels that are missing, and says a deletion still deletes a namespace that keeps its scheduler label', () => {
    const words = unlabelledNamespaceWords('arena', { 'roomkeeper.io/scheduler': 'arena' });
    expect(words).toContain('without the label app.kubernetes.io/managed-by=roomkeeper (');
    expect(words).toContain('deleting the scheduler deletes it all the same');
    expect(words).toMatch(/kubectl label namespace arena app\.kubernetes\.io\/managed-by=roomkeeper --overwrite$/);
  });

  it('with both labels gone, says a deletion leaves it in place', () => {
    const words = unlabelledNamespaceWords('arena', {});
    expect(words).toContain('without the labels app.kubernetes.io/managed-by=roomkeeper and roomkeeper.io/scheduler=arena');
    expect(words).toContain('deleting the scheduler leaves it in place');
  });
});
