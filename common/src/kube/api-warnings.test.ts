import { captureLogs } from '../../../test/support/log-capture';
import { ApiWarnings, warningTexts } from './api-warnings';

const podCreate = { verb: 'create', path: '/api/v1/namespaces/arena/pods' };

describe('the API server\'s warnings', () => {
  it('are read from a Warning header, several joined by commas, quotes unescaped', () => {
    expect(warningTexts('299 - "would violate PodSecurity \\"restricted:latest\\": hostPort (container \\"server\\" uses hostPort 40001)", 299 - "v1 ComponentStatus is deprecated"'))
      .toEqual(['would violate PodSecurity "restricted:latest": hostPort (container "server" uses hostPort 40001)', 'v1 ComponentStatus is deprecated']);
    expect(warningTexts('garbage')).toEqual([]);
  });

  it('are logged once an hour per request kind and text, digits aside, with what to do', () => {
    const logs = captureLogs('info');
    let now = 0;
    const warnings = new ApiWarnings({ logger: logs.logger, now: () => now });
    const psa = (port: number) => `299 - "would violate PodSecurity \\"restricted:latest\\": hostPort (container \\"server\\" uses hostPort ${port})"`;
    warnings.heard(podCreate, psa(40001));
    warnings.heard(podCreate, psa(40002));
    warnings.heard({ verb: 'create', path: '/api/v1/namespaces/other/pods' }, psa(40003));
    now += 60 * 60_000;
    warnings.heard(podCreate, psa(40004));
    expect(logs.lines.map((l) => [l.request, l.warning])).toEqual([
      ['create pods in namespace arena', 'would violate PodSecurity "restricted:latest": hostPort (container "server" uses hostPort 40001)'],
      ['create pods in namespace other', 'would violate PodSecurity "restricted:latest": hostPort (container "server" uses hostPort 40003)'],
      ['create pods in namespace arena', 'would violate PodSecurity "restricted:latest": hostPort (container "server" uses hostPort 40004)'],
    ]);
    expect(logs.lines[0]).toMatchObject({ level: 'info', message: 'the Kubernetes API server warned about a request of this process, which it carried out' });
    expect(String(logs.lines[0]?.whatToDo)).toMatch(/enforcing it \(ROOMKEEPER_ROOM_NAMESPACE_PSA_ENFORCE\) would refuse the rooms$/);
  });
});
