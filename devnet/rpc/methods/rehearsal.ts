import { PublicKey } from '@solana/web3.js';
import { deployProgram } from '../../program/deployment.js';
import { invalidParams } from '../errors.js';
import type { RpcMethod } from '../method.js';

/**
 * Admin methods that produce what the server's watchdog must notice (docs/devnet.md "Breach
 * rehearsals"): a program upgrade, and a tracker whose counters go back without a generation
 * change (what only a compromised program or a forged upgrade could do). The third rehearsal, a
 * colluding set of authorities finalizing a mismatched entry, needs no method: it is two
 * authorities' ordinary ack_deposit transactions (docs/devnet.md shows them).
 */

/** [{ version?: string, upgradeAuthority?: string | null }]: redeploys the bridge program at the current slot; answers the deployment. */
const devnet_upgradeProgram: RpcMethod = (params, { bank }) => {
  const options = (params[0] ?? {}) as { version?: unknown; upgradeAuthority?: unknown };
  const version = options.version ?? `upgraded at slot ${bank.slot}`;
  if (typeof version !== 'string' || version.length === 0 || version.length > 200)
    throw invalidParams('Invalid params: version must be a string of 1..200 characters');
  const authority = options.upgradeAuthority;
  if (authority !== undefined && authority !== null && (typeof authority !== 'string' || !isKey(authority)))
    throw invalidParams('Invalid params: upgradeAuthority must be a base58 public key or null');
  return deployProgram(bank.journal(), bank.programId, bank.slot, version, ...(authority === undefined ? [] : [authority as string | null]));
};

/** [trackerAddress, { entryCount?: number, settledPrefix?: number }]: writes the header's counters as given, generation untouched. */
const devnet_rewindTracker: RpcMethod = (params, { bank }) => {
  const address = params[0];
  const counters = (params[1] ?? {}) as { entryCount?: unknown; settledPrefix?: unknown };
  if (typeof address !== 'string' || !isKey(address) || bank.account(address) === undefined)
    throw invalidParams('Invalid params: expected [trackerAddress, { entryCount?, settledPrefix? }] naming an existing tracker');
  const journal = bank.journal();
  for (const [field, offset] of [
    ['entryCount', 16],
    ['settledPrefix', 32],
  ] as const) {
    const value = counters[field];
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0)
      throw invalidParams(`Invalid params: ${field} must be a non-negative integer`);
    const bytes = Buffer.alloc(8);
    bytes.writeBigUInt64LE(BigInt(value));
    journal.writeData(address, offset, bytes);
  }
  return { address, ...counters };
};

function isKey(value: string): boolean {
  try {
    return new PublicKey(value).toBase58() === value;
  } catch {
    return false;
  }
}

export const rehearsalMethods = { devnet_upgradeProgram, devnet_rewindTracker };
