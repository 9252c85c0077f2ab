import { createHash, timingSafeEqual } from 'node:crypto';
import fastifyBasicAuth from '@fastify/basic-auth';
import type { FastifyInstance } from 'fastify';

/**
 * HTTP Basic auth for the admin endpoints (SPEC §5). @fastify/basic-auth parses the header as
 * RFC 7617 says (scheme, token68, control characters, the user/password split); the comparison
 * is ours: both parts are hashed to fixed-length digests and compared with timingSafeEqual, both
 * always, so neither the length nor the first differing byte of a guess, nor whether the user
 * name was right, shows in the response time. Every failure gets the same 401.
 */

const AUTH_REALM = 'bridge-admin';

export interface AdminCredentials {
  username: string;
  password: string;
}

class AdminAuthError extends Error {
  readonly statusCode = 401;
}

/** Registers the check as an onRequest hook of `scope` (the admin routes' plugin). */
export async function requireAdminAuth(scope: FastifyInstance, credentials: AdminCredentials): Promise<void> {
  const matches = credentialMatcher(credentials);
  await scope.register(fastifyBasicAuth, {
    authenticate: { realm: AUTH_REALM },
    utf8: true,
    validate: async (username, password) => {
      if (!matches(username, password)) throw new AdminAuthError('invalid admin credentials');
    },
  });
  scope.addHook('onRequest', scope.basicAuth);
}

export function credentialMatcher(expected: AdminCredentials): (username: string, password: string) => boolean {
  const expectedUser = digest(expected.username);
  const expectedPassword = digest(expected.password);
  return (username, password) => {
    const userMatches = timingSafeEqual(digest(username), expectedUser);
    const passwordMatches = timingSafeEqual(digest(password), expectedPassword);
    return userMatches && passwordMatches;
  };
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}
