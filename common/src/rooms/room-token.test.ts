import { acceptedRoomTokenSecrets, matchingRoomToken, roomToken, roomTokenKeyId, verifyRoomToken } from './room-token';

describe('room tokens', () => {
  const current = 'current-secret';
  const previous = 'previous-secret';

  it('a token names one room under one secret', () => {
    expect(roomToken(current, 's', 'r1')).not.toBe(roomToken(current, 's', 'r2'));
    expect(roomToken(current, 's', 'r1')).not.toBe(roomToken(previous, 's', 'r1'));
    expect(verifyRoomToken([current], 's', 'r1', roomToken(current, 's', 'r1'))).toBe(true);
    expect(verifyRoomToken([current], 's', 'r2', roomToken(current, 's', 'r1'))).toBe(false);
    expect(verifyRoomToken([current], 's', 'r1', undefined)).toBe(false);
    expect(verifyRoomToken([current], 's', 'r1', '')).toBe(false);
  });

  it('during a rotation accepts tokens under the current and the previous secret, and no other (issue 12 M3)', () => {
    const both = acceptedRoomTokenSecrets(current, previous);
    expect(both).toEqual([current, previous]);
    expect(verifyRoomToken(both, 's', 'r1', roomToken(current, 's', 'r1'))).toBe(true);
    expect(verifyRoomToken(both, 's', 'r1', roomToken(previous, 's', 'r1'))).toBe(true);
    expect(verifyRoomToken(both, 's', 'r1', roomToken('third', 's', 'r1'))).toBe(false);
    expect(matchingRoomToken(both, 's', 'r1', roomToken(previous, 's', 'r1'))).toBe(roomToken(previous, 's', 'r1'));
    // Once the previous secret is dropped, its tokens no longer pass.
    expect(verifyRoomToken(acceptedRoomTokenSecrets(current, ''), 's', 'r1', roomToken(previous, 's', 'r1'))).toBe(false);
    expect(acceptedRoomTokenSecrets('', '')).toEqual([]);
  });

  it('names a secret by a stable key id that is a label value and not the secret', () => {
    expect(roomTokenKeyId(current)).toMatch(/^[0-9a-f]{12}$/);
    expect(roomTokenKeyId(current)).toBe(roomTokenKeyId(current));
    expect(roomTokenKeyId(current)).not.toBe(roomTokenKeyId(previous));
    expect(current).not.toContain(roomTokenKeyId(current));
  });
});
