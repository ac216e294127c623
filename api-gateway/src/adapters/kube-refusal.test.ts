import { gatewayAccessError, kubeRefusalOf, NOT_CARRIED_OUT } from './kube-refusal';

/** A client-node ApiException as the clients throw it: `code` the HTTP status, `body` the Status. */
const apiException = (code: number, message: string, reason: string) => Object.assign(new Error(`HTTP-Code: ${code}\nMessage: x\nBody: "{}"`), { code, body: JSON.stringify({ kind: 'Status', code, reason, message }) });

describe('kubeRefusalOf', () => {
  it.each([
    {
      name: "kube-apiserver's RBAC refusal names verb and resource",
      err: apiException(403, 'schedulers.roomkeeper.io "game-a" is forbidden: User "system:serviceaccount:roomkeeper:roomkeeper-gateway" cannot delete resource "schedulers" in API group "roomkeeper.io" at the cluster scope', 'Forbidden'),
      want: { status: 403, request: 'delete schedulers.roomkeeper.io' },
    },
    {
      name: 'a subresource and the core group',
      err: apiException(403, 'pods "p" is forbidden: User "u" cannot patch resource "pods/status" in API group "" in the namespace "n"', 'Forbidden'),
      want: { status: 403, request: 'patch pods/status' },
    },
    { name: 'a 403 that is no RBAC reason (a webhook)', err: apiException(403, 'admission webhook "x" denied the request', 'Forbidden'), want: { status: 403 } },
    { name: 'credentials rejected', err: apiException(401, 'Unauthorized', 'Unauthorized'), want: { status: 401 } },
  ])('$name', ({ err, want }) => {
    const refusal = kubeRefusalOf(err);
    expect(refusal).toMatchObject(want);
    if (!('request' in want)) expect(refusal?.request).toBeUndefined();
  });

  it.each([
    { name: 'a namespace being deleted (no right missing)', err: apiException(403, 'unable to create new content in namespace s because it is being terminated', 'Forbidden') },
    { name: 'a conflict', err: apiException(409, 'conflict', 'Conflict') },
    { name: 'no answer at all', err: new Error('socket hang up') },
  ])('is none for $name', ({ err }) => {
    expect(kubeRefusalOf(err)).toBeUndefined();
  });
});

describe('gatewayAccessError', () => {
  it('is a 500 (code 13) naming the refused request and what to restore, without the API server\'s words (they name the ServiceAccount)', () => {
    const refusal = kubeRefusalOf(apiException(403, 'x "y" is forbidden: User "system:serviceaccount:ns:gw" cannot create resource "operations" in API group "roomkeeper.io" at the cluster scope', 'Forbidden'));
    const error = gatewayAccessError(refusal!, NOT_CARRIED_OUT);
    expect(error.httpStatus).toBe(500);
    expect(error.toBody().code).toBe(13);
    expect(error.message).toContain('create operations.roomkeeper.io');
    expect(error.message).toContain("restore the chart's RBAC");
    expect(error.message).not.toContain('system:serviceaccount');
    expect(error.serverSaid).toContain('system:serviceaccount');
  });

  it('for rejected credentials says to restart the pod with a fresh token', () => {
    const error = gatewayAccessError(kubeRefusalOf(apiException(401, 'Unauthorized', 'Unauthorized'))!, NOT_CARRIED_OUT);
    expect(error.message).toContain('401 Unauthorized');
    expect(error.message).toContain('delete the gateway pod so that it starts with a fresh token');
  });
});
