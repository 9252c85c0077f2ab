import { describe, expect, it } from 'vitest';
import { credentialMatcher } from '../../src/http/auth.js';

describe('credentialMatcher', () => {
  const matches = credentialMatcher({ username: 'ops', password: 'pa:ss wörd' });

  it.each([
    ['the right pair', 'ops', 'pa:ss wörd', true],
    ['a wrong user', 'opz', 'pa:ss wörd', false],
    ['a wrong password', 'ops', 'pa:ss word', false],
    ['a prefix of the password', 'ops', 'pa:ss', false],
    ['the password with a suffix', 'ops', 'pa:ss wörd!', false],
    ['an empty pair', '', '', false],
    ['user and password swapped', 'pa:ss wörd', 'ops', false],
    ['a case change', 'OPS', 'pa:ss wörd', false],
    ['a different Unicode normalization', 'ops', 'pa:ss wo\u0308rd', false],
  ])('%s -> %s', (_name, username, password, expected) => {
    expect(matches(username, password)).toBe(expected);
  });
});
