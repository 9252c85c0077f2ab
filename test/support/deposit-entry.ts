import { Keypair } from '@solana/web3.js';
import type { DepositEntry } from '../../src/chain/types.js';

/**
 * The one DepositEntry fixture of the tests: transfer `index` with its own amount, depositor
 * and recipient (real addresses, so the codecs can encode it), Initialized and unvoted unless
 * `overrides` say otherwise.
 */

const keys = new Map<number, string>();

/** A fixed address per seed (0..255; memoized: deriving a keypair costs a fraction of a millisecond). */
export function key(seed: number): string {
  let address = keys.get(seed);
  if (address === undefined) {
    address = Keypair.fromSeed(new Uint8Array(32).fill(seed)).publicKey.toBase58();
    keys.set(seed, address);
  }
  return address;
}

export function depositEntry(index: number, overrides: Partial<DepositEntry> = {}): DepositEntry {
  return {
    amount: 1_000n + BigInt(index),
    depositor: key(40 + (index % 50)),
    recipient: key(100 + (index % 50)),
    sourceMint: key(200),
    status: 'Initialized',
    cleanupCompleted: false,
    yesVotes: 0,
    noVotes: 0,
    proposed: { kind: 'None' },
    result: { kind: 'None' },
    refundedAmount: 0n,
    depositSlot: BigInt(index),
    ...overrides,
  };
}
