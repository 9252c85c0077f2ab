import type { PublicKey } from '@solana/web3.js';
import type { ChainSide, CrankAction } from '../../domain.js';
import type { Logger } from '../../log/logger.js';
import type { LandingMode } from '../bridge-chains.js';
import { chainName } from '../chain-name.js';
import { NONCE_ACCOUNT_RENT_LAMPORTS, nonceAccountState, nonceAddress, type NonceAccountState } from '../nonce-account.js';
import { BridgeError } from '../../errors.js';
import type { AccountData, ChainRpc } from '../rpc/chain-rpc.js';
import { NonceMoves } from './nonce-moves.js';
import type { HeaderCompanions } from './tracker-reader.js';

/**
 * One chain's pool of durable-nonce accounts (docs/chain-client.md "Landing once: durable
 * nonces"). Each crank action of the chain has its lane: one account of the pool, always the
 * same (`laneOf`), so that every transaction of an action, whatever life of the process signed
 * it, is signed against the account's current value, and at most one of them can land before
 * the value moves. The pool runs the chain in nonce mode while every account of it is this
 * authority's initialized nonce account; otherwise in blockhash mode, said once per change.
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
  logger: Logger;
}

export class NoncePool implements HeaderCompanions {
  readonly addresses: readonly PublicKey[];
  /** Every read of the pool is also a look at who signs (./nonce-moves.ts). */
  readonly moves: NonceMoves;
  #mode: LandingMode = 'blockhash';
  #said: string | undefined;

  constructor(private readonly options: NoncePoolOptions) {
    this.addresses = Array.from({ length: options.size }, (_, position) => nonceAddress(options.authority, options.chainId, position));
    this.moves = new NonceMoves(options.logger);
  }

  /** The mode the last `observe` found; blockhash before the first. */
  get mode(): LandingMode {
    return this.#mode;
  }

  /** The account `action`'s transactions advance. */
  laneOf(action: CrankAction): PublicKey {
    const position = CHAIN_ACTIONS[this.options.rpc.chain].indexOf(action);
    if (position < 0 || this.addresses.length === 0) throw new RangeError(`${action} has no nonce lane on the ${chainName(this.options.rpc.chain)} chain`);
    return this.addresses[position % this.addresses.length]!;
  }

  /** One answer's accounts of the pool (in `addresses` order) at `slot`: sets the mode; a change of mode is logged once. */
  observe(accounts: readonly AccountData[], slot: number): void {
    if (this.addresses.length === 0) return;
    const states = this.addresses.map((address, i) => this.stateOf(address, accounts[i] ?? null, slot));
    this.#mode = states.every((state) => state.kind === 'ready') ? 'nonce' : 'blockhash';
    this.sayMode(states);
  }

  /**
   * The current value of the lane `address`, at confirmed. Throws CHAIN__INVALID_NONCE_ACCOUNT
   * when it is not this authority's nonce account (closed since the cycle's read): the action
   * fails without a retry (a configuration error to the failure policy), and the next cycle's
   * read finds the pool incomplete and lands in blockhash mode.
   */
  async current(address: PublicKey, signal: AbortSignal): Promise<NonceValue> {
    const { slot, account } = await this.options.rpc.getAccountInfo(address, { commitment: 'confirmed' }, signal);
    const state = this.stateOf(address, account, slot);
    if (state.kind === 'ready') return { nonce: state.nonce, slot };
    const chain = this.options.rpc.chain;
    const reason = state.kind === 'missing' ? 'does not exist' : state.reason;
    throw new BridgeError('CHAIN__INVALID_NONCE_ACCOUNT', { account: address.toBase58(), chain, reason });
  }

  private stateOf(address: PublicKey, account: AccountData, slot: number): NonceAccountState {
    const state = nonceAccountState(account, this.options.authority);
    if (state.kind === 'ready') this.moves.observe(address.toBase58(), state.nonce, slot, this.options.rpc.slotFloor());
    return state;
  }

  private sayMode(states: readonly NonceAccountState[]): void {
    const chain = chainName(this.options.rpc.chain);
    const missing = states.filter((state) => state.kind === 'missing').length;
    const unusable = states.flatMap((state, i) => (state.kind === 'unusable' ? [`${this.addresses[i]!.toBase58()} ${state.reason}`] : []));
    const line =
      this.#mode === 'nonce'
        ? `the ${chain} chain lands transactions in nonce mode (${states.length} nonce accounts)`
        : `the ${chain} chain lands transactions in blockhash mode: ${missing} of ${states.length} nonce accounts missing` +
          `${unusable.length === 0 ? '' : `, unusable: ${unusable.join('; ')}`}; ` +
          `\`npm run ops -- nonce init\` creates them (${NONCE_ACCOUNT_RENT_LAMPORTS} lamports of rent each, returned when closed)`;
    if (line === this.#said) return;
    this.#said = line;
    if (this.#mode === 'nonce') this.options.logger.info({ chain: this.options.rpc.chain, landingMode: this.#mode }, line);
    else this.options.logger.warn({ chain: this.options.rpc.chain, landingMode: this.#mode }, line);
  }
}
