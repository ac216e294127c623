import { crdInfo, type CrdKind } from '../generated/schemas';
import { API_GROUP, API_GROUP_VERSION, API_VERSION, PLURALS, ROOMKEEPER_API, collectionPath } from './api-group';

describe('the API contract', () => {
  const kinds = Object.keys(crdInfo) as CrdKind[];

  test.each(kinds)('%s is served in the one group and version the code uses, under its plural', (kind) => {
    expect(crdInfo[kind].group).toBe(API_GROUP);
    expect(crdInfo[kind].version).toBe(API_GROUP_VERSION);
    expect(crdInfo[kind].apiVersion).toBe(API_VERSION);
    expect(PLURALS[kind]).toBe(crdInfo[kind].plural);
  });

  test('client calls and watch paths are built from it', () => {
    expect(ROOMKEEPER_API).toEqual({ group: 'roomkeeper.io', version: 'v1' });
    expect(collectionPath('GameRoom')).toBe('/apis/roomkeeper.io/v1/gamerooms');
    expect(collectionPath('SchedulerVersion')).toBe('/apis/roomkeeper.io/v1/schedulerversions');
  });
});
