import { PublicKey } from '@solana/web3.js';
import { DEFAULT_PROGRAM_ID } from '../src/chain/codec/layout.js';
import { Bank } from './bank/bank.js';
import type { CommitmentLags } from './bank/commitment-banks.js';
import { deployProgram } from './program/deployment.js';
import type { ComputeCostTable } from './bank/compute-costs.js';
import { Faults } from './faults/faults.js';
import { ReceivedLog } from './faults/forwarding.js';
import type { Account } from './program/store.js';
import { BRIDGE_RPC_METHODS, type RpcServer, startRpcServer } from './rpc/server.js';
import { DevnetError } from './devnet-error.js';

/** One chain of the devnet: a bank running the bridge program behind a JSON-RPC server. */

export const DEFAULT_SLOT_INTERVAL_MS = 400;

export interface DevnetNodeOptions {
  /** The chain id this cluster knows as its own (u16). */
  chainId: number;
  /** Names the chain in errors and logs, e.g. "source". */
  name: string;
  /** 0 (default) picks a free port. */
  port?: number;
  programId?: PublicKey | string;
  /** Milliseconds per slot (default 400); 0 stops the timer (slots pass only with transactions). */
  slotIntervalMs?: number;
  /** Serve the devnet_* admin methods (default true; the node only binds 127.0.0.1). */
  adminMethods?: boolean;
  /** The bridge program's compute costs times this, in (0, 100] (default 1). */
  computeCostScale?: number;
  /**
   * How far the confirmed and finalized banks trail the head, in slots (default none: one bank
   * for every commitment; `AGAVE_COMMITMENT_LAGS` is a mainnet node's 2 and 32, what `npm run
   * devnet` and the demo run).
   */
  commitmentLags?: CommitmentLags;
  /** Aborting it while the node starts closes the node and rejects. */
  signal?: AbortSignal;
}

/** A second JSON-RPC listener in front of the same chain, with faults of its own. */
interface DevnetEndpoint {
  readonly url: string;
  /** This endpoint's faults (slotLag, freezeSlot, errors, ...); `pauseBlocks` still pauses the chain. */
  readonly faults: Faults;
  close(): Promise<void>;
}

export interface DevnetNode {
  readonly name: string;
  readonly url: string;
  readonly port: number;
  readonly chainId: number;
  readonly programId: PublicKey;
  readonly faults: Faults;
  /** The ledger itself, for test affordances (seeding) that write state without transactions. */
  readonly bank: Bank;
  readonly slot: number;
  /** Credits lamports in a transaction of its own (landed at once unless blocks are paused); returns its signature. */
  airdrop(pubkey: PublicKey | string, lamports: number | bigint): string;
  /** A copy of the account, or undefined. */
  getAccount(pubkey: PublicKey | string): Account | undefined;
  advanceSlots(count: number): void;
  /** A program upgrade: the bridge program's compute costs become this version's times `scale`. */
  setComputeCostScale(scale: number): ComputeCostTable;
  /** What the landed transactions still kept (the last 10,000) paid, optionally only those `payer` paid for. */
  feesPaid(payer?: PublicKey | string): FeesPaid;
  pause(): void;
  resume(): void;
  /**
   * Starts another listener on a free loopback port serving this chain; closed with the node.
   * With forwardShare on the primary, one without it is the "staked" send-only path
   * (docs/devnet.md, "Congestion: forwarding and a staked path").
   */
  addEndpoint(): Promise<DevnetEndpoint>;
  /** The slot in which any endpoint of this chain first received `signature` (the last 10,000), or undefined. */
  receivedSlot(signature: string): number | undefined;
  close(): Promise<void>;
}

export interface FeesPaid {
  transactions: number;
  /** Lamports: 5,000 per signature. */
  base: bigint;
  /** Lamports: compute-unit price times limit. */
  priority: bigint;
  total: bigint;
}

export async function startDevnetNode(options: DevnetNodeOptions): Promise<DevnetNode> {
  checkU16(options.chainId, `${options.name}ChainId`);
  const programId = new PublicKey(options.programId ?? DEFAULT_PROGRAM_ID);
  options.signal?.throwIfAborted();
  const slotIntervalMs = options.slotIntervalMs ?? DEFAULT_SLOT_INTERVAL_MS;
  checkInteger(slotIntervalMs, 'slotIntervalMs', 0, 60_000);
  checkInteger(options.port ?? 0, `${options.name}Port`, 0, 65_535);
  const bank = new Bank({
    chainId: options.chainId,
    programId,
    slotIntervalMs,
    computeCostScale: options.computeCostScale,
    commitmentLags: options.commitmentLags,
  });
  deployProgram(bank.journal(), programId, bank.slot, 'v1');
  const received = new ReceivedLog();
  const faults = new Faults(bank, new Set(Object.keys(BRIDGE_RPC_METHODS)), received);
  let server: RpcServer;
  try {
    server = await startRpcServer({ bank, faults, port: options.port ?? 0, adminMethods: options.adminMethods, chain: options.name });
  } catch (err) {
    bank.close();
    throw err;
  }
  let closed: Promise<void> | undefined;
  const rpc = server;
  const replicas: DevnetEndpoint[] = [];
  const addEndpoint = async (): Promise<DevnetEndpoint> => {
    const replicaFaults = new Faults(bank, new Set(Object.keys(BRIDGE_RPC_METHODS)), received);
    const replica = await startRpcServer({ bank, faults: replicaFaults, port: 0, adminMethods: options.adminMethods, chain: options.name });
    const endpoint = { url: replica.url, faults: replicaFaults, close: () => replica.close() };
    replicas.push(endpoint);
    return endpoint;
  };
  if (options.signal?.aborted === true) {
    bank.close();
    await rpc.close();
    throw options.signal.reason;
  }
  return {
    name: options.name,
    url: rpc.url,
    port: rpc.port,
    chainId: options.chainId,
    programId,
    faults,
    bank,
    get slot() {
      return bank.slot;
    },
    airdrop: (pubkey, lamports) => {
      const amount = BigInt(lamports);
      if (amount <= 0n) throw invalidOption('lamports', `must be positive, got ${amount}`);
      return bank.airdrop(new PublicKey(pubkey).toBase58(), amount);
    },
    getAccount: (pubkey) => {
      const account = bank.account(new PublicKey(pubkey).toBase58());
      return account === undefined ? undefined : { ...account, data: account.data.slice() };
    },
    advanceSlots: (count) => {
      checkInteger(count, 'count', 0, 1_000_000);
      bank.advanceSlots(count);
    },
    setComputeCostScale: (scale) => bank.setComputeCostScale(scale),
    feesPaid: (payer) => feesPaid(bank, payer === undefined ? undefined : new PublicKey(payer).toBase58()),
    pause: () => bank.pause(),
    resume: () => bank.resume(),
    addEndpoint,
    receivedSlot: (signature) => received.slotOf(signature),
    close: () => {
      closed ??= (async () => {
        bank.close();
        await Promise.all(replicas.map((replica) => replica.close()));
        await rpc.close();
      })();
      return closed;
    },
  };
}

function feesPaid(bank: Bank, payer: string | undefined): FeesPaid {
  const paid: FeesPaid = { transactions: 0, base: 0n, priority: 0n, total: 0n };
  for (const landed of bank.landedTransactions()) {
    if (payer !== undefined && landed.feePayer !== payer) continue;
    paid.transactions += 1;
    paid.base += landed.fee - landed.priorityFee;
    paid.priority += landed.priorityFee;
    paid.total += landed.fee;
  }
  return paid;
}

export function checkU16(value: number, option: string): void {
  checkInteger(value, option, 0, 0xffff);
}

export function checkInteger(value: number, option: string, min: number, max: number): void {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw invalidOption(option, `must be an integer in ${min} ..= ${max}, got ${String(value)}`);
  }
}

export function invalidOption(option: string, reason: string): DevnetError<'DEVNET__INVALID_OPTION'> {
  return new DevnetError('DEVNET__INVALID_OPTION', { option, reason }, `devnet option ${option} ${reason}`);
}
