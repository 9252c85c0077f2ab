/**
 * The variables that come as a set, and the startup errors of a set left partial: the five that
 * switch the crank on (SPEC §2.1, §7), the admin credentials' pair (SPEC §2.1), and
 * BRIDGE_REQUIRE_CRANK, which asks for the five. config.ts joins these lines to the others.
 */

type SetVariables = Readonly<Record<string, string | undefined>>;

/** The five variables that switch the crank on; all or none (SPEC §2.1). */
export const RUNTIME_VARIABLES = [
  'BRIDGE_SOURCE_RPC_URL',
  'BRIDGE_TARGET_RPC_URL',
  'BRIDGE_SOURCE_CHAIN_ID',
  'BRIDGE_TARGET_CHAIN_ID',
  'BRIDGE_AUTHORITY_KEYPAIR',
] as const;

export const AUTH_VARIABLES = ['BRIDGE_AUTH_USERNAME', 'BRIDGE_AUTH_PASSWORD'] as const;

/** BRIDGE_REQUIRE_CRANK=true: a server that would run without its crank (none of the five set) does not start. */
export function requiredCrankProblems(set: SetVariables): string[] {
  if (set.BRIDGE_REQUIRE_CRANK !== 'true' || RUNTIME_VARIABLES.some((name) => set[name] !== undefined)) return [];
  return [
    `BRIDGE_REQUIRE_CRANK: true, but none of ${RUNTIME_VARIABLES.join(', ')} is set: the crank would be disabled and this server would sign nothing; set them, or unset BRIDGE_REQUIRE_CRANK for a server without a crank`,
  ];
}

/** SPEC §7: a partial runtime set is a startup error; name every missing variable. */
export function partialRuntimeProblems(set: SetVariables): string[] {
  const present = RUNTIME_VARIABLES.filter((name) => set[name] !== undefined);
  if (present.length === 0) return [];
  const rule = `the crank needs all of ${RUNTIME_VARIABLES.join(', ')} once any is set (set: ${present.join(', ')})`;
  return RUNTIME_VARIABLES.filter((name) => set[name] === undefined).map((name) => `${name}: missing; ${rule}`);
}

/** SPEC §2.1: both auth variables or neither; the line names both. */
export function partialAuthProblems(set: SetVariables): string[] {
  const [username, password] = AUTH_VARIABLES;
  if ((set[username] === undefined) === (set[password] === undefined)) return [];
  const missing = set[username] === undefined ? username : password;
  return [
    `${missing}: missing; ${username} and ${password} must be set together (both to protect the admin endpoints, neither to rely on ingress restriction)`,
  ];
}
