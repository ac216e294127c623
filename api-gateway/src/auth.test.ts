import { basicAuthorized, bearerToken, credentialsMatch, parseBasicAuthorization, safeEqual, type Credentials } from './auth';

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

  it('accepts a header it accepted before only while the same credentials are current (a rotation forgets it)', () => {
    let current: Credentials | undefined = { username: 'u', password: 'p' };
    const provider = { current: () => current };
    const basic = (user: string, pass: string, scheme = 'Basic') => `${scheme} ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
    expect(basicAuthorized(provider, basic('u', 'p'))).toBe(true);
    expect(basicAuthorized(provider, basic('u', 'p'))).toBe(true);
    expect(basicAuthorized(provider, basic('u', 'x'))).toBe(false);
    expect(basicAuthorized(provider, undefined)).toBe(false);
    // More spellings of the valid header than are remembered: each is still checked, and accepted.
    for (let spaces = 1; spaces <= 12; spaces++) expect(basicAuthorized(provider, basic('u', 'p', `basic${' '.repeat(spaces)}`))).toBe(true);
    current = { username: 'u', password: 'rotated' };
    expect(basicAuthorized(provider, basic('u', 'p'))).toBe(false);
    expect(basicAuthorized(provider, basic('u', 'rotated'))).toBe(true);
    current = undefined;
    expect(basicAuthorized(provider, basic('u', 'rotated'))).toBe(false);
  });

  it('extracts bearer tokens', () => {
    expect(bearerToken('Bearer abc')).toBe('abc');
    expect(bearerToken('bearer abc ')).toBe('abc');
    expect(bearerToken('Bearer')).toBeUndefined();
    expect(bearerToken('Basic abc')).toBeUndefined();
  });
});
