import { KubeAdmissionDeniedError, KubeQuotaExceededError } from '../errors';
import { gatewayAccessError, kubeRefusalOf, NOT_CARRIED_OUT, refusedAs, roomkeeperRequest } from './kube-refusal';

/** A client-node ApiException as the clients throw it: `code` the HTTP status, `body` the Status. */
const apiException = (code: number, message: string, reason: string, details?: object) => Object.assign(new Error(`HTTP-Code: ${code}\nMessage: x\nBody: "{}"`), { code, body: JSON.stringify({ kind: 'Status', code, reason, message, ...(details ? { details } : {}) }) });

/** kube-apiserver's answer to a create the namespace's ResourceQuota has no room for (v1.28, as the trial saw it). */
const QUOTA_MESSAGE = 'allocationclaims.roomkeeper.io "id-0f3a" is forbidden: exceeded quota: cq, requested: count/allocationclaims.roomkeeper.io=1, used: count/allocationclaims.roomkeeper.io=0, limited: count/allocationclaims.roomkeeper.io=0';
const quotaRefusal = () => apiException(403, QUOTA_MESSAGE, 'Forbidden', { name: 'id-0f3a', group: 'roomkeeper.io', kind: 'allocationclaims' });

/** The error as the allocation use case throws it on: named as its create of an AllocationClaim in namespace m11. */
function namedAsClaimCreate(err: Error): Error {
  try {
    refusedAs(roomkeeperRequest('create', 'AllocationClaim', 'm11'))(err);
  } catch (thrown) {
    expect(thrown).toBe(err);
  }
  return err;
}

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
      want: { status: 403, cause: 'rbac', request: 'patch pods/status in namespace n', namespace: 'n' },
    },
    {
      name: "a ResourceQuota's refusal, the request named by the use case",
      err: namedAsClaimCreate(quotaRefusal()),
      want: { status: 403, cause: 'quota', request: 'create allocationclaims.roomkeeper.io in namespace m11', namespace: 'm11', quota: { name: 'cq', resources: ['count/allocationclaims.roomkeeper.io'] }, reason: QUOTA_MESSAGE.replace(/^.* is forbidden: /, '') },
    },
    {
      name: "a ResourceQuota's refusal of several resources, the request unnamed: the resource is the Status's",
      err: apiException(403, 'gamerooms.roomkeeper.io "r" is forbidden: exceeded quota: q2, requested: count/gamerooms.roomkeeper.io=1,requests.storage=1Gi, used: x=1, limited: x=1', 'Forbidden', { name: 'r', group: 'roomkeeper.io', kind: 'gamerooms' }),
      want: { status: 403, cause: 'quota', request: 'write gamerooms.roomkeeper.io', quota: { name: 'q2', resources: ['count/gamerooms.roomkeeper.io', 'requests.storage'] } },
    },
    {
      name: 'an admission webhook\'s denial',
      err: namedAsClaimCreate(apiException(403, 'admission webhook "claims.policy.example.com" denied the request: claims are closed tonight', 'Forbidden')),
      want: { status: 403, cause: 'admission', request: 'create allocationclaims.roomkeeper.io in namespace m11', admission: 'admission webhook "claims.policy.example.com"', reason: 'admission webhook "claims.policy.example.com" denied the request: claims are closed tonight' },
    },
    {
      name: "a ValidatingAdmissionPolicy's denial",
      err: apiException(403, "schedulers.roomkeeper.io \"s\" is forbidden: ValidatingAdmissionPolicy 'max-rooms' with binding 'max-rooms-all' denied request: too many rooms", 'Forbidden', { name: 's', group: 'roomkeeper.io', kind: 'schedulers' }),
      want: { status: 403, cause: 'admission', request: 'write schedulers.roomkeeper.io', admission: "ValidatingAdmissionPolicy 'max-rooms' (binding 'max-rooms-all')" },
    },
    { name: 'a 403 of no reason it recognizes', err: apiException(403, 'forbidden by a proxy', 'Forbidden'), want: { status: 403, cause: 'unknown', reason: 'forbidden by a proxy' } },
    { name: 'credentials rejected', err: apiException(401, 'Unauthorized', 'Unauthorized'), want: { status: 401, cause: 'credentials' } },
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

describe('refusedAs', () => {
  it('keeps the first request an error was named as', () => {
    const err = quotaRefusal();
    expect(() => refusedAs(roomkeeperRequest('create', 'AllocationClaim', 'm11'))(err)).toThrow(err);
    expect(() => refusedAs(roomkeeperRequest('delete', 'Scheduler'))(err)).toThrow(err);
    expect(kubeRefusalOf(err)?.request).toBe('create allocationclaims.roomkeeper.io in namespace m11');
  });

  it('lets RBAC\'s own words name the request (a store call may send more than one)', () => {
    const err = apiException(403, 'allocationclaims.roomkeeper.io "x" is forbidden: User "u" cannot get resource "allocationclaims" in API group "roomkeeper.io" in the namespace "m11"', 'Forbidden');
    expect(() => refusedAs(roomkeeperRequest('create', 'AllocationClaim', 'm11'))(err)).toThrow(err);
    expect(kubeRefusalOf(err)?.request).toBe('get allocationclaims.roomkeeper.io in namespace m11');
  });
});

describe('gatewayAccessError', () => {
  it("for a ResourceQuota is a 429 (code 8, Retry-After) naming the request, the quota's words and how to raise it, not RBAC", () => {
    const error = gatewayAccessError(kubeRefusalOf(namedAsClaimCreate(quotaRefusal()))!, NOT_CARRIED_OUT);
    expect(error).toBeInstanceOf(KubeQuotaExceededError);
    expect(error.httpStatus).toBe(429);
    expect(error.toBody().code).toBe(8);
    expect(error.retryAfterSeconds).toBe(5);
    expect(error.message).toBe(
      "the Kubernetes API server refused the gateway's own request to create allocationclaims.roomkeeper.io in namespace m11 (403 Forbidden: exceeded quota: cq, requested: count/allocationclaims.roomkeeper.io=1, used: count/allocationclaims.roomkeeper.io=0, limited: count/allocationclaims.roomkeeper.io=0): "
      + `${NOT_CARRIED_OUT}; the namespace's ResourceQuota cq has no room left for count/allocationclaims.roomkeeper.io (the gateway's rights are not at fault): raise its hard limit for it (kubectl -n m11 edit resourcequota cq), or wait until objects it counts are deleted, then send the request again`,
    );
    expect(error.message).not.toContain('RBAC');
    expect(error.toBody().details).toEqual([{
      reason: 'KUBERNETES_QUOTA_EXCEEDED', request: 'create allocationclaims.roomkeeper.io in namespace m11', quota: 'cq', namespace: 'm11',
      kubernetesReason: 'exceeded quota: cq, requested: count/allocationclaims.roomkeeper.io=1, used: count/allocationclaims.roomkeeper.io=0, limited: count/allocationclaims.roomkeeper.io=0',
    }]);
  });

  it('for a ResourceQuota not counted yet is a 429 (code 8, Retry-After) that says to wait until it is counted, not to raise it', () => {
    const said = 'allocationclaims.roomkeeper.io "id-1" is forbidden: status unknown for quota: cq, resources: count/allocationclaims.roomkeeper.io';
    const refusal = kubeRefusalOf(namedAsClaimCreate(apiException(403, said, 'Forbidden', { name: 'id-1', group: 'roomkeeper.io', kind: 'allocationclaims' })));
    expect(refusal).toMatchObject({ cause: 'quota', quota: { name: 'cq', resources: ['count/allocationclaims.roomkeeper.io'], uncounted: true } });
    const error = gatewayAccessError(refusal!, NOT_CARRIED_OUT);
    expect(error).toBeInstanceOf(KubeQuotaExceededError);
    expect(error.httpStatus).toBe(429);
    expect(error.retryAfterSeconds).toBe(5);
    expect(error.message).toBe(
      "the Kubernetes API server refused the gateway's own request to create allocationclaims.roomkeeper.io in namespace m11 (403 Forbidden: status unknown for quota: cq, resources: count/allocationclaims.roomkeeper.io): "
      + `${NOT_CARRIED_OUT}; the namespace's ResourceQuota cq has not been counted yet (it has no status: kube-controller-manager counts a new quota within seconds, unless it is down), and until it is the API server refuses every object it limits `
      + "(count/allocationclaims.roomkeeper.io; the gateway's rights are not at fault): wait until it shows what is used (kubectl -n m11 get resourcequota cq), then send the request again",
    );
  });

  it('for a quota refusing a write after an earlier one went through asks for no retry', () => {
    const error = gatewayAccessError(kubeRefusalOf(quotaRefusal())!, 'scheduler s was created, but not its operation', {}, false);
    expect(error.retryAfterSeconds).toBeUndefined();
    expect(error.message).not.toContain('send the request again');
    expect(error.message).toContain('kubectl edit resourcequota cq in the namespace of the refused request');
  });

  it('for an admission webhook is a 403 (code 7) naming the webhook and its words', () => {
    const error = gatewayAccessError(kubeRefusalOf(namedAsClaimCreate(apiException(403, 'admission webhook "claims.policy.example.com" denied the request: claims are closed tonight', 'Forbidden')))!, NOT_CARRIED_OUT);
    expect(error).toBeInstanceOf(KubeAdmissionDeniedError);
    expect(error.httpStatus).toBe(403);
    expect(error.toBody().code).toBe(7);
    expect(error.retryAfterSeconds).toBeUndefined();
    expect(error.message).toContain("refused the gateway's own request to create allocationclaims.roomkeeper.io in namespace m11: admission webhook \"claims.policy.example.com\" denied it (admission webhook \"claims.policy.example.com\" denied the request: claims are closed tonight)");
    expect(error.message).toContain('not the gateway\'s rights');
    expect(error.toBody().details[0]).toMatchObject({ reason: 'KUBERNETES_ADMISSION_DENIED', admission: 'admission webhook "claims.policy.example.com"' });
  });

  it("for a 403 of no reason it recognizes is a 500 carrying the API server's words and both remedies", () => {
    const error = gatewayAccessError(kubeRefusalOf(apiException(403, 'forbidden by a proxy', 'Forbidden'))!, NOT_CARRIED_OUT);
    expect(error.httpStatus).toBe(500);
    expect(error.message).toContain("refused a request of the gateway's own (403 Forbidden: forbidden by a proxy)");
    expect(error.message).toContain("restore the chart's RBAC");
    expect(error.toBody().details[0]).toMatchObject({ reason: 'GATEWAY_FORBIDDEN', kubernetesReason: 'forbidden by a proxy' });
  });

  it('never sends a token the API server\'s words carry', () => {
    const error = gatewayAccessError(kubeRefusalOf(apiException(403, 'admission webhook "w" denied the request: bad Authorization: Bearer eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln', 'Forbidden'))!, NOT_CARRIED_OUT);
    expect(JSON.stringify(error.toBody())).not.toContain('eyJ');
    expect(error.serverSaid).toContain('eyJ');
  });

  it("is a 500 (code 13) naming the refused request and what to restore, the ServiceAccount the API server's words name masked", () => {
    const refusal = kubeRefusalOf(apiException(403, 'x "y" is forbidden: User "system:serviceaccount:ns:gw" cannot create resource "operations" in API group "roomkeeper.io" at the cluster scope', 'Forbidden'));
    const error = gatewayAccessError(refusal!, NOT_CARRIED_OUT);
    expect(error.httpStatus).toBe(500);
    expect(error.toBody().code).toBe(13);
    expect(error.message).toContain('create operations.roomkeeper.io');
    expect(error.message).toContain("restore the chart's RBAC");
    expect(JSON.stringify(error.toBody())).not.toContain('system:serviceaccount');
    expect(error.toBody().details[0]).toMatchObject({ reason: 'GATEWAY_FORBIDDEN', request: 'create operations.roomkeeper.io', kubernetesReason: expect.stringContaining("the gateway's ServiceAccount cannot create resource") as unknown });
    expect(error.serverSaid).toContain('system:serviceaccount');
  });

  it('for rejected credentials says to restart the pod with a fresh token', () => {
    const error = gatewayAccessError(kubeRefusalOf(apiException(401, 'Unauthorized', 'Unauthorized'))!, NOT_CARRIED_OUT);
    expect(error.message).toContain('401 Unauthorized');
    expect(error.message).toContain('delete the gateway pod so that it starts with a fresh token');
  });
});
