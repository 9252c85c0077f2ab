import type { PublicKey } from '@solana/web3.js';
import { BridgeError } from '../../errors.js';

/** Throws CHAIN__INVALID_OWNER unless the account is owned by the configured bridge program (`variable` names its setting). */
export function assertOwnedBy(account: string, owner: PublicKey, programId: PublicKey, variable = 'the configured program id for this chain'): void {
  if (owner.equals(programId)) return;
  throw new BridgeError('CHAIN__INVALID_OWNER', { account, expected: programId.toBase58(), actual: owner.toBase58() }, { variable });
}
