/** The chart README's permission table is the rendered RBAC, rule for rule (issue 12, M2). */
import * as fs from 'node:fs';
import { expectedTable, README, readmeTable } from './permissions-table';

describe('helm/roomkeeper/README.md permissions', () => {
  it('lists exactly the rules the templates render (regenerate: npx tsx test/helm/permissions-table.ts)', async () => {
    const expected = await expectedTable();
    expect(readmeTable(fs.readFileSync(README, 'utf8'))).toBe(expected);
    // The table is not vacuous: both components, both scopes, and no ConfigMaps anywhere.
    expect(expected).toMatch(/^\| operator \| cluster \|/m);
    expect(expected).toMatch(/^\| operator \| release namespace \|/m);
    expect(expected).toMatch(/^\| gateway \| cluster \|/m);
    expect(expected).toMatch(/^\| gateway \| release namespace \| core \| `secrets` \| `<fullname>-auth` \| get \|$/m);
    expect(expected).not.toContain('configmaps');
  });
});
