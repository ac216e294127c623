import { buildInfo } from './build-info';

describe('buildInfo', () => {
  it('reads package.json\'s version, and the revision from ROOMKEEPER_REVISION or the git checkout', () => {
    const info = buildInfo({ ROOMKEEPER_REVISION: 'abc123' });
    expect(info.version).toMatch(/^\d+\.\d+\.\d+/);
    // Read once per process: the first call decides, so this test only checks its shape.
    expect(info.revision).toMatch(/^(abc123|[0-9a-f]{12}|unknown)$/);
    expect(buildInfo()).toBe(info);
  });
});
