import { requestKind } from './clients';

describe('requestKind', () => {
  it.each([
    ['GET', 'https://h:6443/api/v1/namespaces/s1/pods?labelSelector=x', 'list', 'pods'],
    ['GET', 'https://h:6443/api/v1/namespaces/s1/pods/room-1', 'get', 'pods'],
    ['PATCH', 'https://h/apis/roomkeeper.io/v1/namespaces/s1/gamerooms/room-1/status', 'patch', 'gamerooms/status'],
    ['POST', 'https://h/apis/events.k8s.io/v1/namespaces/default/events', 'create', 'events'],
    ['PUT', 'https://h/apis/coordination.k8s.io/v1/namespaces/ns/leases/roomkeeper', 'update', 'leases'],
    ['DELETE', 'https://h/apis/roomkeeper.io/v1/operations/op-1', 'delete', 'operations'],
    ['GET', 'https://h/api/v1/namespaces/s1', 'get', 'namespaces'],
    ['GET', 'https://h/api/v1/nodes', 'list', 'nodes'],
  ])('%s %s is %s %s (no names or namespaces as labels)', (method, url, verb, resource) => {
    expect(requestKind(method, url)).toEqual({ verb, resource });
  });
});
