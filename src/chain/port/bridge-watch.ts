import type { ChainSide } from '../../domain.js';
import type { Base58, DepositEntry, TrackerHeader, WithdrawEntry } from '../types.js';

/**
 * What the watchdog (src/machines/watchdog/) reads of the chains beyond the crank's own view:
 * the records a breach rests on, at finalized, from every endpoint in service (so one lying node
 * cannot raise a breach), and the bridge program's deployment (docs/operating.md "The
 * watchdog"). The chain client implements it (src/chain/client/read/bridge-watch.ts).
 */
export interface BridgeWatch {
  /** Both trackers' headers and the entries asked for, at finalized, as each endpoint in service answers. */
  readFinalized(request: FinalizedRequest, signal: AbortSignal): Promise<Record<ChainSide, EndpointAnswers<TrackerAnswer>>>;
  /** The bridge program's deployment on each chain, as each endpoint in service answers. */
  readDeployments(signal: AbortSignal): Promise<Record<ChainSide, EndpointAnswers<DeploymentAnswer>>>;
}

/** Entry indices to read per chain (each tracker's header is always read). */
export type FinalizedRequest = Record<ChainSide, readonly number[]>;

/** One chain's answers: how many endpoints it has in service, and those that answered. */
export interface EndpointAnswers<A> {
  endpoints: number;
  answers: A[];
}

/** One endpoint's finalized view of a tracker: its header and the entries asked for (absent: at or past entry_count). */
export interface TrackerAnswer {
  endpoint: string;
  slot: number;
  header: TrackerHeader;
  deposits: ReadonlyMap<number, DepositEntry>;
  withdrawals: ReadonlyMap<number, WithdrawEntry>;
}

/**
 * The bridge program as the BPF upgradeable loader keeps it (PROTOCOL.md, the
 * program's deployment): the programdata account's address, its last deployment slot, its upgrade
 * authority (null: immutable), and sha256 (hex) of the program bytes with the trailing zero
 * padding cut, as `solana-verify get-program-hash` computes it. `problem`: the deployment is not
 * an upgradeable program (another loader, no account), said in words.
 */
export type DeploymentAnswer = { endpoint: string; slot: number } & (
  | { programData: Base58; deploySlot: string; upgradeAuthority: Base58 | null; hash: string }
  | { problem: string }
);
