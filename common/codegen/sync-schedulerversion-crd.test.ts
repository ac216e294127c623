import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { main, syncedSchedulerVersionCrd } from './sync-schedulerversion-crd';

const crds = resolve(__dirname, '../../crds');
const schedulers = readFileSync(resolve(crds, 'roomkeeper.io_schedulers.yaml'), 'utf8');
const versions = readFileSync(resolve(crds, 'roomkeeper.io_schedulerversions.yaml'), 'utf8');

describe('sync-schedulerversion-crd', () => {
  it('the committed SchedulerVersion CRD is in sync (what --check enforces)', () => {
    expect(syncedSchedulerVersionCrd(schedulers, versions)).toBe(versions);
    expect(main(['--check'])).toBe(0);
  });

  it('carries a change of the Scheduler spec schema into the definition, keeping comments', () => {
    const edited = schedulers.replace("maxLength: 1024\n                            pattern: '^[^", "maxLength: 2048\n                            pattern: '^[^");
    expect(edited).not.toBe(schedulers);
    const synced = syncedSchedulerVersionCrd(edited, versions);
    expect(synced).not.toBe(versions);
    expect(synced).toContain('maxLength: 2048');
    expect(synced.startsWith('---\n# Roomkeeper SchedulerVersion')).toBe(true);
  });
});
