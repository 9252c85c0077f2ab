import type { PublicKey } from '@solana/web3.js';
import { type ChainSide, type CrankAction, chainName } from '../../../domain.js';
import type { Logger } from '../../../log/logger.js';
import type { LifetimeMode } from '../../port/bridge-chains.js';
import { NONCE_ACCOUNT_RENT_LAMPORTS, nonceAccountState, nonceAddress, type NonceAccountState } from '../../nonce-account.js';
import { BridgeError } from '../../../errors.js';
import type { ChainRpc } from '../../rpc/chain-rpc.js';
import type { AccountData } from '../../rpc/rpc-answers.js';
import type { Metrics } from '../../../metrics/metrics.js';
import { claimedValues, disputeKey, stillHeld, valueForTurn, type ClaimedValue } from './nonce-claims.js';
import { NonceMoves } from './nonce-moves.js';
import type { RecentValues } from '../read/signer-evidence.js';
import type { HeaderCompanions } from '../read/tracker-reader.js';

/**
 * One chain's pool of durable-nonce accounts (docs/chain-client.md "Landing once: durable
 * nonces"). Each crank action of the chain has its lane: one account of the pool, always the
 * same while the pool's accounts in use do not change (`laneOf`), so that every transaction of
 * an action, whatever life of the process signed it, is signed against the account's current
 * value, and at most one of them can land before the value moves.
 *
 * A lane is in use while its account is this authority's initialized nonce account. One that
 * was in use and is then closed, re-authorized or malformed gives one error line naming it and
 * the fix, and is out of use from that read on; its actions move to the other lanes in use. The
 * chain runs in nonce mode while some lane is in use, in blockhash mode otherwise, said once per
 * change. Each read decides afresh: an account that is usable again is back in use at the next.
 *
 * The cycle reads the pool with the chain's tracker header, in one answer (`observe`, as the
 * header's companions); a lane's value is read again right before each signature (`current`):
 * every transaction that lands moves it, so the cycle's value is stale after the first.
 */

/** The actions of each chain, in lane order: an action's lane is its position modulo the pool size. */
const CHAIN_ACTIONS: Record<ChainSide, readonly CrankAction[]> = {
  source: ['ack_withdraw', 'cleanup_deposit'],
  target: ['ack_deposit'],
};

/** A nonce value as one read saw it, with the slot of that read. */
export interface NonceValue {
  nonce: string;
  slot: number;
}

export interface NoncePoolOptions {
  rpc: ChainRpc;
  authority: PublicKey;
  /** This chain's id: the accounts' seeds name it. */
  chainId: number;
  /** BRIDGE_NONCE_ACCOUNTS. */
  size: number;
  /** Every nonce value read is one this process saw (../read/signer-evidence.ts). */
  recent: RecentValues;
  logger: Logger;
  metrics: Metrics;
}

export class NoncePool implements HeaderCompanions {
  readonly addresses: readonly PublicKey[];
  /** Every read of the pool is also a look at who signs (./nonce-moves.ts). */
  readonly moves: NonceMoves;
  #mode: LifetimeMode = 'blockhash';
  #said: string | undefined;
  /** The accounts in use, in pool order, as the last `observe` found. */
  #inUse: PublicKey[] = [];
  /** Per account: it was in use once; and the problem last said of it (once per change). */
  readonly #known = new Map<string, { wasReady: boolean; problem?: string }>();
  /** Per account: the standing dispute over its value, and how many signatures it has seen. */
  readonly #disputes = new Map<string, { key: string; turn: number }>();

  constructor(private readonly options: NoncePoolOptions) {
    this.addresses = Array.from({ length: options.size }, (_, position) => nonceAddress(options.authority, options.chainId, position));
    this.moves = new NonceMoves(options.logger);
  }

  /** The mode the last `observe` found; blockhash before the first. */
  get mode(): LifetimeMode {
    return this.#mode;
  }

  /** The account `action`'s transactions advance: its position among the actions, modulo the lanes in use. */
  laneOf(action: CrankAction): PublicKey {
    const position = CHAIN_ACTIONS[this.options.rpc.chain].indexOf(action);
    if (position < 0 || this.#inUse.length === 0)
      throw new RangeError(`${action} has no nonce lane on the ${chainName(this.options.rpc.chain)} chain`);
    return this.#inUse[position % this.#inUse.length]!;
  }

  /** One answer's accounts of the pool (in `addresses` order) at `slot`: sets the lanes in use and the mode; a change of mode is logged once. */
  observe(accounts: readonly AccountData[], slot: number): void {
    if (this.addresses.length === 0) return;
    const states = this.addresses.map((address, i) => this.stateOf(address, accounts[i] ?? null, slot));
    for (const [i, state] of states.entries()) this.sayProblem(this.addresses[i]!, state, slot);
    this.#inUse = this.addresses.filter((_, i) => states[i]!.kind === 'ready');
    this.#mode = this.#inUse.length > 0 ? 'nonce' : 'blockhash';
    this.sayMode(states);
  }

  /**
   * The lane's value to sign against now, read at confirmed from every endpoint in service
   * (./nonce-claims.ts): the one value they agree on; when they disagree, a warn line,
   * `bridge_nonce_value_disputes_total`, and each claimed value in turn at each signature while
   * the dispute stands. With `held` (the value versions were signed against), that value while
   * it may still hold (`stillHeld`). Throws
   * CHAIN__INVALID_NONCE_ACCOUNT when no endpoint shows this authority's nonce account (closed
   * since the cycle's read): the action fails without a retry (a configuration error to the
   * failure policy), and the next cycle's read finds the pool incomplete and lands in blockhash mode.
   */
  async current(address: PublicKey, signal: AbortSignal, held?: string): Promise<NonceValue> {
    const answers = await this.options.rpc.getAccountInfoEverywhere(address, 'confirmed', signal);
    // Every endpoint failed: one read with its retries says why.
    if (answers.length === 0)
      answers.push({ ...(await this.options.rpc.getAccountInfo(address, { commitment: 'confirmed' }, signal)), endpoint: '' });
    const states = answers.map((answer) => ({ answer, state: nonceAccountState(answer.account, this.options.authority) }));
    const claims = states.flatMap(({ answer, state }) =>
      state.kind === 'ready' ? [{ endpoint: answer.endpoint, slot: answer.slot, nonce: state.nonce }] : [],
    );
    if (claims.length === 0) {
      const { answer, state } = states[0]!;
      const { reason, fix } = laneProblem(state as Exclude<NonceAccountState, { kind: 'ready' }>);
      throw new BridgeError(
        'CHAIN__INVALID_NONCE_ACCOUNT',
        { account: address.toBase58(), chain: this.options.rpc.chain, reason, slot: answer.slot },
        { fix },
      );
    }
    const values = claimedValues(claims);
    if (values.length === 1) {
      const [{ nonce, slot }] = values as [ClaimedValue];
      this.#disputes.delete(address.toBase58());
      this.sawValue(address, nonce, slot);
      return { nonce, slot };
    }
    for (const { nonce } of values) this.options.recent.saw(nonce);
    if (held !== undefined && stillHeld(values, held)) return { nonce: held, slot: values.find((value) => value.nonce === held)!.slot };
    const { nonce, slot } = this.nextOfDispute(address, values);
    return { nonce, slot };
  }

  /** The value of a standing dispute to sign against this time; the dispute said once, counted each time. */
  private nextOfDispute(address: PublicKey, values: readonly ClaimedValue[]): ClaimedValue {
    const account = address.toBase58();
    const key = disputeKey(values);
    const known = this.#disputes.get(account);
    const turn = known?.key === key ? known.turn + 1 : 0;
    this.#disputes.set(account, { key, turn });
    const { chain } = this.options.rpc;
    this.options.metrics.nonceValueDisputes.inc({ chain });
    if (turn === 0) {
      this.options.logger.warn(
        { chain, account, claims: values.map(({ nonce, endpoints, slot }) => ({ nonce, endpoints, slot })) },
        `the RPC endpoints of the ${chainName(chain)} chain disagree on nonce account ${account}'s value: ` +
          'each claimed value is signed against in turn (only a transaction against the value the account holds can land, and at most one ever does); ' +
          'an endpoint serving values that never existed delays each vote by an attempt until it is taken out of BRIDGE_*_RPC_URL / _FALLBACK_URLS',
      );
    }
    return valueForTurn(values, turn);
  }

  private stateOf(address: PublicKey, account: AccountData, slot: number): NonceAccountState {
    const state = nonceAccountState(account, this.options.authority);
    if (state.kind === 'ready') this.sawValue(address, state.nonce, slot);
    return state;
  }

  /** A value one view agrees on: seen (../read/signer-evidence.ts), and a look at who moved the nonce. */
  private sawValue(address: PublicKey, nonce: string, slot: number): void {
    this.options.recent.sawNonce(address.toBase58(), nonce);
    this.moves.observe(address.toBase58(), nonce, slot, this.options.rpc.slotFloor());
  }

  /** An account that was in use and no longer is: one error line per change, naming it and the fix. */
  private sayProblem(address: PublicKey, state: NonceAccountState, slot: number): void {
    const account = address.toBase58();
    const known = this.#known.get(account) ?? { wasReady: false };
    this.#known.set(account, known);
    if (state.kind === 'ready') {
      known.wasReady = true;
      delete known.problem;
      return;
    }
    if (!known.wasReady) return;
    const { reason, fix } = laneProblem(state);
    if (known.problem === reason) return;
    known.problem = reason;
    const chain = this.options.rpc.chain;
    this.options.logger.error(
      { chain, account, reason },
      new BridgeError('CHAIN__INVALID_NONCE_ACCOUNT', { account, chain, reason, slot }, { fix }).message,
    );
  }

  private sayMode(states: readonly NonceAccountState[]): void {
    const chain = chainName(this.options.rpc.chain);
    const missing = states.filter((state) => state.kind === 'missing').length;
    const unusable = states.flatMap((state, i) => (state.kind === 'unusable' ? [`${this.addresses[i]!.toBase58()} ${state.reason}`] : []));
    const inUse = states.filter((state) => state.kind === 'ready').length;
    const line =
      this.#mode === 'nonce'
        ? `the ${chain} chain lands transactions in nonce mode (${inUse} of ${states.length} nonce accounts in use` +
          `${missing === 0 ? '' : `; ${missing} missing: \`npm run ops -- nonce init\` creates them`})`
        : `the ${chain} chain lands transactions in blockhash mode: ${missing} of ${states.length} nonce accounts missing` +
          `${unusable.length === 0 ? '' : `, unusable: ${unusable.join('; ')}`}; ` +
          `\`npm run ops -- nonce init\` creates them (${NONCE_ACCOUNT_RENT_LAMPORTS} lamports of rent each, returned when closed); ` +
          "it may run while this server runs: its transactions are the operator's, never a second signer, and the next cycle lands in nonce mode";
    if (line === this.#said) return;
    this.#said = line;
    if (this.#mode === 'nonce') this.options.logger.info({ chain: this.options.rpc.chain, landingMode: this.#mode }, line);
    else this.options.logger.warn({ chain: this.options.rpc.chain, landingMode: this.#mode }, line);
  }
}

/** Why an account cannot be a lane, and what makes it one again. */
function laneProblem(state: Exclude<NonceAccountState, { kind: 'ready' }>): { reason: string; fix: string } {
  if (state.kind === 'missing') return { reason: 'does not exist', fix: '`npm run ops -- nonce init` creates it again' };
  if (state.reason.startsWith('its nonce authority is')) {
    return {
      reason: state.reason,
      fix: 'authorize it back to this authority (AuthorizeNonceAccount, signed by its nonce authority), or withdraw it and run `npm run ops -- nonce init`',
    };
  }
  return {
    reason: state.reason,
    fix: 'it is no nonce account of this authority; `npm run ops -- nonce init` repairs an empty one, and the other lanes carry its actions until then',
  };
}
