import type { Account } from '../program/store.js';
import type { AddressSignature, AddressSignatureQuery, LandedTransaction, SignatureStatus } from './history.js';
import type { DevnetTransaction } from './transaction.js';
import type { ExecutionResult } from './execute.js';
import { DevnetError } from '../devnet-error.js';

/**
 * Each commitment is its own bank (PROTOCOL.md "What real RPC nodes do that a friendly one does
 * not"), as Agave's rpc.rs answers a read from `get_bank_with_config(commitment)`: `processed`
 * is the head (the slot transactions land in now), `confirmed` trails it by `confirmedLagSlots`,
 * `finalized` by `finalizedLagSlots`. A bank's slot, block height, latest blockhash, accounts, statuses and
 * history are those at the end of its slot (slot-history.ts keeps what the later slots wrote).
 * A request that names no commitment reads `finalized` (CommitmentConfig's default).
 */

export type CommitmentLevel = 'processed' | 'confirmed' | 'finalized';

export interface CommitmentLags {
  /** Slots the confirmed bank trails the head by (0: confirmed is the head). */
  confirmedLagSlots: number;
  /** Slots the finalized bank trails the head by; at least the confirmed lag. */
  finalizedLagSlots: number;
}

/** One bank for every commitment, as the devnet was before it had banks: every test that does not ask for lags. */
export const NO_COMMITMENT_LAGS: CommitmentLags = { confirmedLagSlots: 0, finalizedLagSlots: 0 };
/** About what a mainnet node shows: optimistic confirmation 1-2 slots behind the head, the root about 32. */
export const AGAVE_COMMITMENT_LAGS: CommitmentLags = { confirmedLagSlots: 2, finalizedLagSlots: 32 };
/** A finalized bank further back than a blockhash lives would know no blockhash the chain still accepts. */
export const MAX_LAG_SLOTS = 150;

/** The names a node accepts, legacy ones as Agave maps them (CommitmentLevel's deprecated variants). */
const LEVELS: Readonly<Record<string, CommitmentLevel>> = {
  processed: 'processed',
  recent: 'processed',
  confirmed: 'confirmed',
  single: 'confirmed',
  singleGossip: 'confirmed',
  finalized: 'finalized',
  root: 'finalized',
  max: 'finalized',
};

/** The level a checked commitment value names; undefined (none given) is finalized, as on Agave. */
export function commitmentLevel(value: string | undefined): CommitmentLevel {
  return value === undefined ? 'finalized' : LEVELS[value]!;
}

export function isCommitment(value: unknown): value is string {
  return typeof value === 'string' && value in LEVELS;
}

export interface SimulationResult extends ExecutionResult {
  /** Post-simulation copies of the requested accounts (undefined: the account does not exist). */
  accounts: Array<Account | undefined>;
}

/** The chain as one commitment's bank sees it: everything at the end of `slot`. */
export interface BankView {
  readonly commitment: CommitmentLevel;
  readonly slot: number;
  readonly blockHeight: number;
  /** The slots of the confirmed and finalized banks seen from this one's node (a status's confirmationStatus). */
  readonly confirmedSlot: number;
  readonly finalizedSlot: number;
  account(address: string): Readonly<Account> | undefined;
  /** This bank's latest blockhash, or the one made `behindSlots` blocks before it. */
  latestBlockhash(behindSlots?: number): { blockhash: string; lastValidBlockHeight: number };
  /** A status of a transaction that landed at or before this bank's slot. */
  signatureStatus(signature: string): SignatureStatus | undefined;
  transaction(signature: string): LandedTransaction | undefined;
  signaturesForAddress(address: string, query: AddressSignatureQuery): AddressSignature[];
  /** Runs `tx` on this bank's state; blockhashes newer than its slot (and the newest `blockhashLagSlots` before it) are unknown. */
  simulate(tx: DevnetTransaction, options: { checkBlockhash: boolean; blockhashLagSlots?: number; accounts?: string[] }): SimulationResult;
}

export function checkCommitmentLags(lags: CommitmentLags): CommitmentLags {
  const { confirmedLagSlots: confirmed, finalizedLagSlots: finalized } = lags;
  const valid = (lag: number) => Number.isInteger(lag) && lag >= 0 && lag <= MAX_LAG_SLOTS;
  if (!valid(confirmed) || !valid(finalized) || confirmed > finalized) {
    throw new DevnetError(
      'DEVNET__INVALID_OPTION',
      { option: 'commitmentLags', reason: `confirmed ${confirmed}, finalized ${finalized}` },
      `devnet option commitmentLags must be whole slots with 0 <= confirmedLagSlots <= finalizedLagSlots <= ${MAX_LAG_SLOTS}, got confirmed ${confirmed} and finalized ${finalized}`,
    );
  }
  return { confirmedLagSlots: confirmed, finalizedLagSlots: finalized };
}
