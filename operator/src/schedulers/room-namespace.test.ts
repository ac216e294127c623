import { loadConfig } from '../../../common/src/config';
import { roomNamespaceLabels } from './room-namespace';

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
