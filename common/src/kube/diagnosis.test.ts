import { ApiException } from '@kubernetes/client-node';
import { resourceOf, whatToDo } from './diagnosis';

const ctx = (path: string, verb = 'list') => ({ server: 'https://10.0.0.1:6443', path, verb });
const apiError = (code: number, message: string) => new ApiException(code, message, JSON.stringify({ kind: 'Status', code, message }), {});

describe('what to do about a failed Kubernetes request', () => {
  test('no answer: names the server and where the kubeconfig came from', () => {
    const err = Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) });
    expect(whatToDo(err, ctx('/api/v1/pods'))).toBe('the Kubernetes API server at https://10.0.0.1:6443 does not answer: check that the cluster runs and that the kubeconfig (E2E_KUBECONFIG, KUBECONFIG or the in-cluster ServiceAccount, in that order) points at it');
  });

  test('forbidden: names the verb and the resource, and the chart value that grants it', () => {
    const err = apiError(403, 'schedulers.roomkeeper.io is forbidden: User "system:serviceaccount:x:y" cannot list resource "schedulers"');
    expect(whatToDo(err, ctx('/apis/roomkeeper.io/v1/schedulers'))).toMatch(/^this identity may not list schedulers\.roomkeeper\.io: install with the Helm chart, whose RBAC grants it \(rbac\.create=true/);
    expect(whatToDo(err, ctx('/apis/coordination.k8s.io/v1/namespaces/rk/leases/roomkeeper', 'update'))).toMatch(/^this identity may not update leases\.coordination\.k8s\.io in namespace rk:/);
  });

  test('a Roomkeeper CRD missing: names it and how to install it', () => {
    expect(whatToDo(apiError(404, 'the server could not find the requested resource'), ctx('/apis/roomkeeper.io/v1/gamerooms')))
      .toBe('the CustomResourceDefinition gamerooms.roomkeeper.io is not installed on https://10.0.0.1:6443: install the chart (helm install roomkeeper helm/roomkeeper installs crds/) or kubectl apply -f crds/');
  });

  test('credentials rejected', () => {
    expect(whatToDo(apiError(401, 'Unauthorized'), ctx('/api/v1/pods'))).toMatch(/rejected the credentials/);
  });

  test.each([
    ['a missing object (not a missing CRD)', apiError(404, 'not found'), '/apis/roomkeeper.io/v1/schedulers/x'],
    ['a 404 outside our group', apiError(404, 'not found'), '/api/v1/pods'],
    ['a server error', apiError(500, 'etcd timeout'), '/api/v1/pods'],
    ['a 410 Gone', apiError(410, 'too old resource version'), '/api/v1/pods'],
  ])('%s: nothing to do', (_name, err, path) => {
    expect(whatToDo(err, ctx(path))).toBeUndefined();
  });

  test('resource paths, core and grouped, namespaced or not', () => {
    expect(resourceOf('/api/v1/pods?labelSelector=a').display).toBe('pods (all namespaces)');
    expect(resourceOf('/api/v1/namespaces/ns1/pods/p').display).toBe('pods in namespace ns1');
    expect(resourceOf('/apis/roomkeeper.io/v1/namespaces/ns1/gamerooms')).toEqual({ group: 'roomkeeper.io', plural: 'gamerooms', display: 'gamerooms.roomkeeper.io in namespace ns1' });
    expect(resourceOf('/apis/roomkeeper.io/v1/gamerooms').display).toBe('gamerooms.roomkeeper.io (all namespaces)');
    // Kinds without namespaces are not said to span them.
    expect(resourceOf('/apis/roomkeeper.io/v1/schedulers?watch=true').display).toBe('schedulers.roomkeeper.io');
    expect(resourceOf('/apis/roomkeeper.io/v1/operations/op-1').display).toBe('operations.roomkeeper.io');
    expect(resourceOf('/api/v1/namespaces').display).toBe('namespaces');
    expect(resourceOf('/api/v1/nodes/n1').display).toBe('nodes');
  });
});
