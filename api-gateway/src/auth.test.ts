import { bearerToken, credentialsMatch, parseBasicAuthorization, safeEqual } from './auth';

describe('auth helpers', () => {
  it('parses Basic credentials, including passwords with colons', () => {
    expect(parseBasicAuthorization(`Basic ${Buffer.from('u:p:q').toString('base64')}`)).toEqual({ username: 'u', password: 'p:q' });
    expect(parseBasicAuthorization(`basic ${Buffer.from('u:').toString('base64')}`)).toEqual({ username: 'u', password: '' });
  });

  it.each([undefined, '', 'Basic', 'Basic ', 'Bearer abc', `Basic ${Buffer.from('nocolon').toString('base64')}`, 'Basic ***'])('rejects %j', (header) => {
    expect(parseBasicAuthorization(header)).toBeUndefined();
  });

  it('compares in constant time over digests of any length', () => {
    expect(safeEqual('a', 'a')).toBe(true);
    expect(safeEqual('a', 'a'.repeat(1000))).toBe(false);
    expect(credentialsMatch({ username: 'u', password: 'p' }, { username: 'u', password: 'p' })).toBe(true);
    expect(credentialsMatch({ username: 'u', password: 'x' }, { username: 'u', password: 'p' })).toBe(false);
    expect(credentialsMatch({ username: 'x', password: 'p' }, { username: 'u', password: 'p' })).toBe(false);
  });

  it('extracts bearer tokens', () => {
    expect(bearerToken('Bearer abc')).toBe('abc');
    expect(bearerToken('bearer abc ')).toBe('abc');
    expect(bearerToken('Bearer')).toBeUndefined();
    expect(bearerToken('Basic abc')).toBeUndefined();
  });
});
