import { Keypair, PublicKey, type TransactionInstruction } from '@solana/web3.js';
import { depositInstruction, resetPendingInstruction, setTokenPairInstruction, withdrawInstruction } from '../../devnet/instructions.js';
import { tokenPairAddress } from '../../src/chain/pda.js';
import { submitTransaction, type ChainPair, type TokenPairKind, type World } from '../../devnet/index.js';
import { describeError } from '../../src/errors.js';
import { userConnection } from './clients.js';
import type { ChainSide } from './ledger.js';
import type { TrackerAddresses } from './snapshot.js';

/**
 * Everyone who is not an authority: depositors on the source, a user claiming withdrawals on
 * the destination, and governance. They send real transactions through JSON-RPC, so injected
 * faults hit them too; whether a transaction landed is the ledger's business, not theirs.
 */

/** A deposit's token pair: one of the world's four, or a mint that has no TokenPair at all. */
export type PairKind = TokenPairKind | 'missing';
export const PAIR_KINDS: readonly PairKind[] = ['normal', 'frozen', 'lowLimit', 'lowVault', 'missing'];

export interface TokenPairSettings {
  frozen: boolean;
  limitRemaining: bigint;
  vaultBalance: bigint;
}

const USER_LAMPORTS = 100_000_000_000;
/** A user waits this long for a status, then walks away (the ledger still sees a late landing). */
const USER_STATUS_TIMEOUT_MS = 250;

export class Participants {
  readonly mints: Record<PairKind, PublicKey>;
  private readonly depositors = [Keypair.generate(), Keypair.generate()];
  private readonly claimer = Keypair.generate();
  private readonly programId: PublicKey;
  private readonly sourceChainId: number;
  private readonly connections: Record<ChainSide, ReturnType<typeof userConnection>>;

  constructor(
    pair: ChainPair,
    world: World,
    private readonly trackers: TrackerAddresses,
    private readonly governance: Keypair,
  ) {
    this.programId = new PublicKey(world.programId);
    this.sourceChainId = world.source.chainId;
    this.mints = {
      normal: new PublicKey(world.tokenPairs.normal.sourceMint),
      frozen: new PublicKey(world.tokenPairs.frozen.sourceMint),
      lowLimit: new PublicKey(world.tokenPairs.lowLimit.sourceMint),
      lowVault: new PublicKey(world.tokenPairs.lowVault.sourceMint),
      missing: Keypair.generate().publicKey,
    };
    for (const depositor of this.depositors) pair.source.airdrop(depositor.publicKey, USER_LAMPORTS);
    pair.target.airdrop(this.claimer.publicKey, USER_LAMPORTS);
    this.connections = { source: userConnection(pair.source.url), target: userConnection(pair.target.url) };
  }

  /** Fee payers whose balances the fee accounting follows. */
  keys(): string[] {
    return [...this.depositors, this.claimer, this.governance].map((keypair) => keypair.publicKey.toBase58());
  }

  deposit(kind: PairKind, amount: bigint, recipient: string, depositor: number): Promise<string> {
    const signer = this.depositors[depositor % this.depositors.length]!;
    const ix = depositInstruction({
      programId: this.programId,
      depositor: signer.publicKey,
      depositTracker: this.trackers.depositTracker,
      amount,
      recipient,
      sourceMint: this.mints[kind].toBase58(),
    });
    return this.send('source', 'deposit', ix, signer);
  }

  /** withdraw: the user takes a Confirmed withdrawal into a (fresh) token account. */
  claim(index: number): Promise<string> {
    const ix = withdrawInstruction({
      programId: this.programId,
      signer: this.claimer.publicKey,
      withdrawTracker: this.trackers.withdrawTracker,
      tokenAccount: Keypair.generate().publicKey,
      index: BigInt(index),
    });
    return this.send('target', 'withdraw', ix, this.claimer);
  }

  setTokenPair(kind: PairKind, settings: TokenPairSettings): Promise<string> {
    const sourceMint = this.mints[kind];
    const ix = setTokenPairInstruction({
      programId: this.programId,
      governance: this.governance.publicKey,
      withdrawTracker: this.trackers.withdrawTracker,
      tokenPair: tokenPairAddress(this.programId, this.sourceChainId, sourceMint),
      sourceMint: sourceMint.toBase58(),
      // The target side of a pair plays no part in the transfer phases.
      targetMint: sourceMint.toBase58(),
      ...settings,
    });
    return this.send('target', 'set_token_pair', ix, this.governance);
  }

  resetPending(): Promise<string> {
    const ix = resetPendingInstruction({
      programId: this.programId,
      governance: this.governance.publicKey,
      depositTracker: this.trackers.depositTracker,
    });
    return this.send('source', 'reset_pending', ix, this.governance);
  }

  private async send(chain: ChainSide, step: string, ix: TransactionInstruction, signer: Keypair): Promise<string> {
    const signal = AbortSignal.timeout(10_000);
    try {
      const signature = await submitTransaction(this.connections[chain], [ix], [signer], { chain, step, signal, timeoutMs: USER_STATUS_TIMEOUT_MS });
      return `landed ${signature.slice(0, 8)}`;
    } catch (err) {
      return `failed: ${describeError(err)}`;
    }
  }
}
