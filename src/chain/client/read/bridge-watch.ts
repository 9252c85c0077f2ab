import { createHash } from 'node:crypto';
import { PublicKey } from '@solana/web3.js';
import type { ChainSide } from '../../../domain.js';
import { decodeDepositEntry, decodeTrackerHeader, decodeWithdrawEntry } from '../../codec/accounts.js';
import { TRACKER_HEADER_SIZE, entryOffset, entrySize } from '../../codec/layout.js';
import type { BridgeWatch, DeploymentAnswer, EndpointAnswers, FinalizedRequest, TrackerAnswer } from '../../port/bridge-watch.js';
import type { ChainRpc } from '../../rpc/chain-rpc.js';
import { MAX_ACCOUNT_SLICE_BYTES } from '../../rpc/bounded-body.js';
import type { DepositEntry, WithdrawEntry } from '../../types.js';
import type { TrackerRef } from './tracker-reader.js';

/**
 * The watchdog's reads (src/chain/port/bridge-watch.ts): every one asks each endpoint in service
 * (getAccountInfoEverywhere), so that what decides a breach is what all of them answer. They run
 * only for a breach candidate (its entries and headers) and on the slow cadence of the
 * deployment read (docs/operating.md "The watchdog": their cost).
 */

const BPF_UPGRADEABLE_LOADER = new PublicKey('BPFLoaderUpgradeab1e11111111111111111111111');
/** UpgradeableLoaderState::Program: u32 tag 2, then the programdata address. */
const PROGRAM_STATE_SIZE = 36;
const PROGRAM_TAG = 2;
/** UpgradeableLoaderState::ProgramData: u32 tag 3, u64 slot, Option<Pubkey> upgrade authority (1 + 32). */
const PROGRAMDATA_METADATA_SIZE = 45;
const PROGRAMDATA_TAG = 3;
const FINALIZED = 'finalized';

export interface WatchedChain {
  rpc: ChainRpc;
  tracker: TrackerRef;
  /** Endpoints configured for the chain (its primary and fallbacks). */
  endpoints: number;
}

export function createBridgeWatch(chains: Record<ChainSide, WatchedChain>): BridgeWatch {
  const hashes = new Map<string, string>();
  return {
    readFinalized: async (request: FinalizedRequest, signal: AbortSignal) => {
      const [source, target] = await Promise.all([
        trackerAnswers(chains.source, request.source, signal),
        trackerAnswers(chains.target, request.target, signal),
      ]);
      return { source, target };
    },
    readDeployments: async (signal: AbortSignal) => {
      const [source, target] = await Promise.all([
        deploymentAnswers(chains.source, hashes, signal),
        deploymentAnswers(chains.target, hashes, signal),
      ]);
      return { source, target };
    },
  };
}

/** Each endpoint's header and entries; an endpoint whose answers do not decode, or that missed one of them, is left out. */
async function trackerAnswers(
  { rpc, tracker, endpoints }: WatchedChain,
  indices: readonly number[],
  signal: AbortSignal,
): Promise<EndpointAnswers<TrackerAnswer>> {
  const headers = await rpc.getAccountInfoEverywhere(tracker.address, FINALIZED, signal, { offset: 0, length: TRACKER_HEADER_SIZE });
  const entryReads = await Promise.all(
    indices.map((index) =>
      rpc.getAccountInfoEverywhere(tracker.address, FINALIZED, signal, { offset: entryOffset(tracker.kind, index), length: entrySize(tracker.kind) }),
    ),
  );
  const answers: TrackerAnswer[] = [];
  for (const read of headers) {
    if (read.account === null || !read.account.owner.equals(tracker.programId)) continue;
    try {
      const header = decodeTrackerHeader(read.account.data, tracker.kind, tracker.account);
      const deposits = new Map<number, DepositEntry>();
      const withdrawals = new Map<number, WithdrawEntry>();
      let slot = read.slot;
      let complete = true;
      for (const [k, index] of indices.entries()) {
        const entry = entryReads[k]!.find((one) => one.endpoint === read.endpoint);
        if (entry === undefined || entry.account === null) {
          complete = false;
          break;
        }
        slot = Math.min(slot, entry.slot);
        if (BigInt(index) >= header.entryCount || entry.account.data.length < entrySize(tracker.kind)) continue;
        if (tracker.kind === 'DepositTracker') deposits.set(index, decodeDepositEntry(entry.account.data, tracker.account, index));
        else withdrawals.set(index, decodeWithdrawEntry(entry.account.data, tracker.account, index));
      }
      if (complete) answers.push({ endpoint: read.endpoint, slot, header, deposits, withdrawals });
    } catch {
      // A node answering bytes that do not decode is no witness; the others decide.
    }
  }
  return { endpoints, answers };
}

/**
 * The program and programdata accounts per endpoint. The program bytes are hashed only when an
 * endpoint shows a (programdata, slot, length) not hashed before: an upgrade rewrites the slot,
 * so the cadence's reads are two small slices per endpoint, and the bytes are read, in
 * MAX_ACCOUNT_SLICE_BYTES slices, once per deployment.
 */
async function deploymentAnswers(
  { rpc, tracker, endpoints }: WatchedChain,
  hashes: Map<string, string>,
  signal: AbortSignal,
): Promise<EndpointAnswers<DeploymentAnswer>> {
  const programs = await rpc.getAccountInfoEverywhere(tracker.programId, FINALIZED, signal, { offset: 0, length: PROGRAM_STATE_SIZE });
  const answers: DeploymentAnswer[] = [];
  const byProgramData = new Map<string, Array<{ endpoint: string; slot: number }>>();
  for (const { endpoint, slot, account } of programs) {
    if (account === null) answers.push({ endpoint, slot, problem: `no account at the program id ${tracker.programId.toBase58()}` });
    else if (
      !account.owner.equals(BPF_UPGRADEABLE_LOADER) ||
      account.data.length !== PROGRAM_STATE_SIZE ||
      readU32(account.data, 0) !== PROGRAM_TAG
    ) {
      answers.push({ endpoint, slot, problem: `the program account is not an upgradeable program (owner ${account.owner.toBase58()})` });
    } else {
      const address = new PublicKey(account.data.subarray(4, PROGRAM_STATE_SIZE)).toBase58();
      byProgramData.set(address, [...(byProgramData.get(address) ?? []), { endpoint, slot }]);
    }
  }
  for (const [address, asked] of byProgramData) answers.push(...(await programDataAnswers(rpc, new PublicKey(address), asked, hashes, signal)));
  return { endpoints, answers };
}

async function programDataAnswers(
  rpc: ChainRpc,
  programData: PublicKey,
  asked: ReadonlyArray<{ endpoint: string; slot: number }>,
  hashes: Map<string, string>,
  signal: AbortSignal,
): Promise<DeploymentAnswer[]> {
  const metadata = await rpc.getAccountInfoEverywhere(programData, FINALIZED, signal, { offset: 0, length: PROGRAMDATA_METADATA_SIZE });
  type Read = {
    endpoint: string;
    slot: number;
    programData: string;
    deploySlot: string;
    upgradeAuthority: string | null;
    space: number;
    key: string;
  };
  const deployed = asked.map(({ endpoint, slot }): Read | DeploymentAnswer => {
    const account = metadata.find((one) => one.endpoint === endpoint)?.account;
    if (
      account === undefined ||
      account === null ||
      account.data.length < PROGRAMDATA_METADATA_SIZE ||
      readU32(account.data, 0) !== PROGRAMDATA_TAG ||
      account.space === undefined
    ) {
      return { endpoint, slot, problem: `programdata ${programData.toBase58()} is missing or not a ProgramData account` };
    }
    const deploySlot = Buffer.from(account.data).readBigUInt64LE(4).toString();
    const upgradeAuthority = account.data[12] === 1 ? new PublicKey(account.data.subarray(13, PROGRAMDATA_METADATA_SIZE)).toBase58() : null;
    return {
      endpoint,
      slot,
      programData: programData.toBase58(),
      deploySlot,
      upgradeAuthority,
      space: account.space,
      key: `${endpoint}|${programData.toBase58()}|${deploySlot}|${account.space}`,
    };
  });
  const isRead = (one: Read | DeploymentAnswer): one is Read => 'key' in one;
  const unhashed = deployed.filter(isRead).filter((one) => !hashes.has(one.key));
  if (unhashed.length > 0) {
    const space = Math.max(...unhashed.map((one) => one.space));
    const slices: Array<Awaited<ReturnType<ChainRpc['getAccountInfoEverywhere']>>> = [];
    for (let offset = PROGRAMDATA_METADATA_SIZE; offset < space; offset += MAX_ACCOUNT_SLICE_BYTES) {
      slices.push(
        await rpc.getAccountInfoEverywhere(programData, FINALIZED, signal, { offset, length: Math.min(MAX_ACCOUNT_SLICE_BYTES, space - offset) }),
      );
    }
    for (const one of unhashed) {
      const parts = slices.map((slice) => slice.find((answer) => answer.endpoint === one.endpoint)?.account?.data);
      if (parts.every((part) => part !== undefined)) hashes.set(one.key, programHash(parts));
    }
  }
  return deployed.map((one): DeploymentAnswer => {
    if (!isRead(one)) return one;
    const hash = hashes.get(one.key);
    const { endpoint, slot, deploySlot, upgradeAuthority } = one;
    return hash === undefined
      ? { endpoint, slot, problem: `the program bytes of ${programData.toBase58()} were not read completely` }
      : { endpoint, slot, programData: programData.toBase58(), deploySlot, upgradeAuthority, hash };
  });
}

/** sha256 (hex) of the program bytes after the metadata, trailing zero padding cut (`solana-verify get-program-hash`). */
function programHash(parts: readonly Uint8Array[]): string {
  const bytes = Buffer.concat(parts);
  let end = bytes.length;
  while (end > 0 && bytes[end - 1] === 0) end--;
  return createHash('sha256').update(bytes.subarray(0, end)).digest('hex');
}

function readU32(data: Uint8Array, offset: number): number {
  return Buffer.from(data.buffer, data.byteOffset, data.byteLength).readUInt32LE(offset);
}
