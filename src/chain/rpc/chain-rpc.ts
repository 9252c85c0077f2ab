import type { BlockhashWithExpiryBlockHeight, Commitment, PublicKey } from '@solana/web3.js';
import type { Metrics } from '../../metrics/metrics.js';
import type { ChainSide } from '../../domain.js';
import type { Endpoint } from './endpoint.js';
import { EndpointPool } from './endpoint-pool.js';
import { createHistoryReads, type HistoryReads } from './history-reads.js';
import { createPoolReads, minContext } from './pool-reads.js';
import { bankOf } from './slot-view.js';
import { jsonRpcCall, preflightFailure, rpcFailure } from './rpc-failure.js';
import { isDefiniteSendRefusal } from '../../failure-policy.js';
import type { Logger } from '../../log/logger.js';
import type { RpcFetch } from './rpc-fetch.js';
import { zeroMethodCounters, type RpcMethod } from './rpc-methods.js';
import {
  accountsOf,
  checkMultipleAccountsRequest,
  prioritizationFeesOf,
  simulationOf,
  spaceOf,
  type AccountSnapshot,
  type AccountsSnapshot,
  type ChainHeight,
  type SignatureStatusAt,
  type Simulation,
  type SlotPrioritizationFee,
} from './rpc-answers.js';

/**
 * The RPC methods the chain client uses on one chain, each with an AbortSignal and every
 * failure as CHAIN__RPC_FAILED (or the signal's reason once aborted). A chain may have several
 * endpoints (./endpoint-pool.ts): reads go to the best one and fail over, signed bytes go to
 * every one in service (docs/chain-client.md, "Several endpoints per chain").
 *
 * Reads go through web3.js's Connection (typed, validated responses). sendTransaction is a
 * plain JSON-RPC call (see ./rpc-failure.ts). Nothing here opens a websocket: the Connection
 * creates its websocket client lazily, for subscriptions and confirmTransaction, which this
 * server never uses; confirmation polls getSignatureStatuses instead. With
 * `disableRetryOnRateLimit` web3.js never enters its 429 loop, the only place its HTTP path
 * writes to the console, so web3.js prints nothing and the global console stays untouched.
 * Reads are retried instead (./pool-reads.ts, ./read-retry.ts: bounded, jittered, honouring
 * Retry-After, counted in bridge_rpc_retries_total); sendTransaction is sent once per call.
 * Every answer is checked before it is used (./rpc-answers.ts). The history reads, which only
 * endpoints that keep history answer, are ./history-reads.ts's.
 */

interface GetAccountOptions {
  commitment: Commitment;
  dataSlice?: { offset: number; length: number };
  /** The node must have processed at least this slot (JSON-RPC -32016 otherwise, retryable). */
  minContextSlot?: number;
}

interface GetMultipleAccountsOptions {
  commitment: Commitment;
  /**
   * One slice for every address (the method takes one). A node cuts it to each account's data,
   * as Agave's `slice_data` does: a shorter account answers its bytes from `offset` to its end,
   * one that ends before `offset` answers none. addresses x length is at most
   * MAX_ACCOUNT_SLICE_BYTES, so the answer stays within the response bound (./bounded-body.ts).
   */
  dataSlice: { offset: number; length: number };
  /** The node must have processed at least this slot (JSON-RPC -32016 otherwise, retryable). */
  minContextSlot?: number;
}

interface SendOptions {
  skipPreflight: boolean;
  preflightCommitment: Commitment;
}

export interface ChainRpc extends HistoryReads {
  readonly chain: ChainSide;
  getAccountInfo(address: PublicKey, options: GetAccountOptions, signal: AbortSignal): Promise<AccountSnapshot>;
  /**
   * `address` as each endpoint in service sees it, one read each, concurrently, labelled with
   * the endpoint: for what one endpoint's word must not decide (a second endpoint corroborating
   * a nonce move, a watchdog's breach). An endpoint that fails is left out. At `finalized` the
   * slot floor is not asked for: it is a confirmed slot, which the finalized bank trails by about
   * 32 slots (PROTOCOL.md: each commitment is its own bank); the caller judges each answer's slot.
   */
  getAccountInfoEverywhere(
    address: PublicKey,
    commitment: Commitment,
    signal: AbortSignal,
    dataSlice?: { offset: number; length: number },
  ): Promise<Array<AccountSnapshot & { endpoint: string }>>;
  /**
   * Several accounts in one answer, at one slot: at most MAX_MULTIPLE_ACCOUNTS addresses and
   * MAX_ACCOUNT_SLICE_BYTES of data in all (a RangeError before any request otherwise).
   */
  getMultipleAccounts(addresses: readonly PublicKey[], options: GetMultipleAccountsOptions, signal: AbortSignal): Promise<AccountsSnapshot>;
  getBalance(address: PublicKey, commitment: Commitment, signal: AbortSignal): Promise<number>;
  getLatestBlockhash(commitment: Commitment, signal: AbortSignal): Promise<BlockhashWithExpiryBlockHeight>;
  /** The slot and block height of one node's view (getEpochInfo), never a pair from two nodes. */
  getChainHeight(commitment: Commitment, signal: AbortSignal): Promise<ChainHeight>;
  /**
   * One signature's status with the context slot of the answer. With
   * `searchTransactionHistory` it needs history (see `getSignaturesForAddress`).
   */
  getSignatureStatus(signature: string, options: { searchTransactionHistory: boolean }, signal: AbortSignal): Promise<SignatureStatusAt>;
  /**
   * The head: the processed bank's slot as the best endpoint answers it now (getSlot at
   * processed), judged against what the chain can have made and never a floor mark
   * (./slot-view.ts). Where slots to land count from (docs/chain-client.md, "Landing measured");
   * nothing is decided on it.
   */
  getProcessedSlot(signal: AbortSignal): Promise<number>;
  /** Sends signed wire bytes (base64, maxRetries 0); resolves with the signature the node reports. */
  sendTransaction(wire: Uint8Array, options: SendOptions, signal: AbortSignal): Promise<string>;
  /** Runs unsigned wire bytes (any blockhash: the node puts in its own) without landing them, at confirmed. */
  simulateTransaction(wire: Uint8Array, signal: AbortSignal): Promise<Simulation>;
  /**
   * The same simulation on the best endpoint in service other than `answered` (a second
   * opinion); undefined when the chain has no other.
   */
  simulateTransactionElsewhere(wire: Uint8Array, answered: string, signal: AbortSignal): Promise<Simulation | undefined>;
  /** The recent slots' lowest landed price for transactions that write `writableAccounts` (at most 128 addresses). */
  getRecentPrioritizationFees(writableAccounts: readonly PublicKey[], signal: AbortSignal): Promise<SlotPrioritizationFee[]>;
  /** Whether some endpoint of the chain keeps transaction history; undefined until a history read said. */
  hasHistory(): boolean | undefined;
  /** What an operator must fix in the chain's endpoints now (a node of another cluster), each naming its variable. */
  configurationProblems(): string[];
  /**
   * The slot a confirmed read of the chain carries as minContextSlot (docs/chain-client.md, "One
   * floor per bank"): one two answers agreed on, or one a landing rests on; undefined before any.
   */
  slotFloor(): number | undefined;
}

export interface ChainRpcOptions {
  chain: ChainSide;
  /** The primary endpoint (BRIDGE_*_RPC_URL). */
  url: string;
  /** Further endpoints (BRIDGE_*_RPC_FALLBACK_URLS), in order of preference. */
  fallbackUrls?: readonly string[];
  /** BRIDGE_RPC_MAX_SLOT_LAG. */
  maxSlotLag?: number;
  timeoutMs: number;
  metrics: Metrics;
  /** Endpoint refusals and history changes are logged here, once per change. */
  logger?: Logger;
  /** The underlying fetch; globalThis.fetch unless a test injects one. */
  fetch?: RpcFetch;
  /** The pool's clock (ms); Date.now unless a test moves time on. */
  now?: () => number;
}

/** The default of BRIDGE_RPC_MAX_SLOT_LAG, for callers without configuration (tests, tools). */
const DEFAULT_MAX_SLOT_LAG = 128;

export interface PooledChainRpc extends ChainRpc {
  /** Endpoint labels (origins), primary first: for the startup line. */
  readonly endpoints: readonly string[];
}

export function createChainRpc(options: ChainRpcOptions): PooledChainRpc {
  const { chain, metrics } = options;
  zeroMethodCounters(chain, metrics);
  const pool = new EndpointPool({
    chain,
    urls: [options.url, ...(options.fallbackUrls ?? [])],
    timeoutMs: options.timeoutMs,
    maxSlotLag: options.maxSlotLag ?? DEFAULT_MAX_SLOT_LAG,
    metrics,
    ...(options.logger === undefined ? {} : { logger: options.logger }),
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
    ...(options.now === undefined ? {} : { now: options.now }),
  });
  const { read, historyRead, retried, carryingFloor, atSlot } = createPoolReads<RpcMethod>(pool, { chain, metrics, timeoutMs: options.timeoutMs });
  const history = createHistoryReads(chain, historyRead);

  /**
   * The same signed bytes to every endpoint in service; the first acceptance wins. One request
   * per endpoint: an endpoint's Retry-After is not waited for here (the failure carries it, and
   * the sender re-sends no sooner).
   */
  async function send(wire: Uint8Array, { skipPreflight, preflightCommitment }: SendOptions, signal: AbortSignal): Promise<string> {
    const config = { encoding: 'base64', skipPreflight, preflightCommitment, maxRetries: 0 };
    const params = [Buffer.from(wire).toString('base64'), config];
    const deadline = pool.time() + options.timeoutMs;
    const sendTo = (endpoint: Endpoint) =>
      pool.run(endpoint, 'sendTransaction', deadline, signal, async () => {
        const result = await jsonRpcCall(endpoint.rpcFetch, endpoint.url, 'sendTransaction', params, signal);
        if (typeof result !== 'string') {
          const reason = `the result is not a signature string: ${JSON.stringify(result)}`;
          throw rpcFailure(chain, 'sendTransaction', { kind: 'malformed', reason });
        }
        return result;
      });
    try {
      return await Promise.any(pool.sendTargets().map(sendTo));
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      throw sendFailureOf(err);
    }
  }

  async function accountOn(
    endpoint: Endpoint,
    address: PublicKey,
    { commitment, dataSlice }: Omit<GetAccountOptions, 'minContextSlot'>,
    floor: number | undefined,
  ): Promise<AccountSnapshot> {
    const { context, value } = await endpoint.connection.getAccountInfoAndContext(address, {
      commitment,
      ...(dataSlice === undefined ? {} : { dataSlice }),
      ...minContext(floor),
    });
    const account = value === null ? null : { owner: value.owner, lamports: value.lamports, data: value.data, ...spaceOf(value) };
    return { slot: atSlot(endpoint, 'getAccountInfo', bankOf(commitment), context.slot, floor), account };
  }

  // A simulation sizes compute and decides a refusal: it carries the floor as every such read.
  async function simulateOn(endpoint: Endpoint, wire: Uint8Array, floor: number | undefined, signal: AbortSignal): Promise<Simulation> {
    const config = { encoding: 'base64', sigVerify: false, replaceRecentBlockhash: true, commitment: 'confirmed', ...minContext(floor) };
    const result = await jsonRpcCall(endpoint.rpcFetch, endpoint.url, 'simulateTransaction', [Buffer.from(wire).toString('base64'), config], signal);
    const { slot, ...simulation } = simulationOf(chain, result);
    atSlot(endpoint, 'simulateTransaction', 'confirmed', slot, floor);
    return { ...simulation, endpoint: endpoint.label };
  }

  return {
    chain,
    endpoints: pool.labels(),

    getAccountInfo: (address, { minContextSlot, ...options }, signal) =>
      read('getAccountInfo', bankOf(options.commitment), signal, (endpoint, floor) => accountOn(endpoint, address, options, floor), minContextSlot),

    getAccountInfoEverywhere: async (address, commitment, signal, dataSlice) => {
      const answers = await Promise.allSettled(
        pool.readOrder().map(async (endpoint) => {
          const floor = pool.slotFloor(bankOf(commitment));
          const options = { commitment, ...(dataSlice === undefined ? {} : { dataSlice }) };
          const snapshot = await retried('getAccountInfo', signal, (deadline) =>
            pool.run(endpoint, 'getAccountInfo', deadline, signal, () => accountOn(endpoint, address, options, floor)),
          );
          return { ...snapshot, endpoint: endpoint.label };
        }),
      );
      if (signal.aborted) throw signal.reason;
      return answers.flatMap((answer) => (answer.status === 'fulfilled' ? [answer.value] : []));
    },

    getMultipleAccounts: (addresses, { commitment, dataSlice, minContextSlot }, signal) => {
      checkMultipleAccountsRequest(addresses.length, dataSlice.length);
      const keys = addresses.map((address) => address.toBase58());
      const multipleAccounts = async (endpoint: Endpoint, floor: number | undefined) => {
        const params = [keys, { commitment, encoding: 'base64', dataSlice, ...minContext(floor) }];
        const snapshot = accountsOf(
          chain,
          await jsonRpcCall(endpoint.rpcFetch, endpoint.url, 'getMultipleAccounts', params, signal),
          addresses.length,
          dataSlice.length,
        );
        atSlot(endpoint, 'getMultipleAccounts', bankOf(commitment), snapshot.slot, floor);
        return snapshot;
      };
      return read('getMultipleAccounts', bankOf(commitment), signal, multipleAccounts, minContextSlot);
    },

    getBalance: (address, commitment, signal) =>
      read('getBalance', bankOf(commitment), signal, async (endpoint, floor) => {
        const { context, value } = await endpoint.connection.getBalanceAndContext(address, { commitment, ...minContext(floor) });
        atSlot(endpoint, 'getBalance', bankOf(commitment), context.slot, floor);
        return value;
      }),

    getLatestBlockhash: (commitment, signal) =>
      read('getLatestBlockhash', bankOf(commitment), signal, async (endpoint, floor) => {
        const { context, value } = await endpoint.connection.getLatestBlockhashAndContext({ commitment, ...minContext(floor) });
        atSlot(endpoint, 'getLatestBlockhash', bankOf(commitment), context.slot, floor);
        return value;
      }),

    getChainHeight: (commitment, signal) =>
      read('getEpochInfo', bankOf(commitment), signal, async (endpoint, floor) => {
        const { absoluteSlot, blockHeight } = await endpoint.connection.getEpochInfo({ commitment, ...minContext(floor) });
        if (blockHeight === undefined) throw rpcFailure(chain, 'getEpochInfo', { kind: 'invalid_result', reason: 'the answer has no blockHeight' });
        return { slot: atSlot(endpoint, 'getEpochInfo', bankOf(commitment), absoluteSlot, floor), blockHeight };
      }),

    // getSignatureStatuses takes no minContextSlot and answers from the processed bank (the head):
    // an answer older than the confirmed floor is refused here instead, and its context slot is
    // never a mark (./slot-view.ts). A landing it reports confirmed or finalized is a view the next
    // reads from that bank must not fall behind (a decision rests on it); one seen only at
    // processed may be on a fork that is abandoned, and nothing rests on it.
    getSignatureStatus: (signature, { searchTransactionHistory }, signal) => {
      const statusRead = async (endpoint: Endpoint, floor: number | undefined): Promise<SignatureStatusAt> => {
        const { context, value } = await endpoint.connection.getSignatureStatuses([signature], { searchTransactionHistory });
        const status = value[0] ?? null;
        const slot = atSlot(endpoint, 'getSignatureStatuses', 'processed', context.slot, floor);
        const landedIn =
          status?.confirmationStatus === 'finalized' ? 'finalized' : status?.confirmationStatus === 'confirmed' ? 'confirmed' : undefined;
        if (status !== null && landedIn !== undefined) pool.restOn(Math.min(status.slot, slot), landedIn);
        return { slot, status };
      };
      return searchTransactionHistory
        ? historyRead('getSignatureStatuses', 'processed', signal, statusRead)
        : read('getSignatureStatuses', 'processed', signal, statusRead);
    },

    getProcessedSlot: (signal) =>
      read('getSlot', 'processed', signal, async (endpoint, floor) =>
        atSlot(endpoint, 'getSlot', 'processed', await endpoint.connection.getSlot({ commitment: 'processed' }), floor),
      ),

    sendTransaction: send,

    simulateTransaction: (wire, signal) =>
      read('simulateTransaction', 'confirmed', signal, (endpoint, floor) => simulateOn(endpoint, wire, floor, signal)),

    simulateTransactionElsewhere: async (wire, answered, signal) => {
      const other = pool.readOrder().find((endpoint) => endpoint.label !== answered);
      if (other === undefined) return undefined;
      const floor = pool.slotFloor('confirmed');
      return carryingFloor(
        floor,
        'confirmed',
        retried('simulateTransaction', signal, (deadline) =>
          pool.run(other, 'simulateTransaction', deadline, signal, () => simulateOn(other, wire, floor, signal)),
        ),
      );
    },

    getRecentPrioritizationFees: (writableAccounts, signal) =>
      read('getRecentPrioritizationFees', 'confirmed', signal, async ({ rpcFetch, url }) => {
        const addresses = writableAccounts.map((address) => address.toBase58());
        const result = await jsonRpcCall(rpcFetch, url, 'getRecentPrioritizationFees', [addresses], signal);
        return prioritizationFeesOf(chain, result);
      }),

    getSignaturesForAddress: history.getSignaturesForAddress,
    getTransactionSignatures: history.getTransactionSignatures,
    getTransactionComputeUnits: history.getTransactionComputeUnits,

    hasHistory: () => pool.hasHistory(),
    configurationProblems: () => pool.configurationProblems(),
    slotFloor: () => pool.slotFloor('confirmed'),
  };
}

/**
 * The failure of a send that no endpoint accepted. It is a refusal only when every endpoint
 * refused (a preflight error first, as with a single endpoint): one endpoint whose answer was
 * lost (a timeout, a 504) may have forwarded the bytes to a leader, so while any failure leaves
 * the outcome unknown, that failure is the answer and the sender watches the signature instead
 * of signing the votes again.
 */
function sendFailureOf(err: unknown): unknown {
  const errors: unknown[] = err instanceof AggregateError ? err.errors : [err];
  const unknownOutcome = errors.find((one) => preflightFailure(one) === undefined && !isDefiniteSendRefusal(one));
  return unknownOutcome ?? errors.find((one) => preflightFailure(one) !== undefined) ?? errors[0];
}
