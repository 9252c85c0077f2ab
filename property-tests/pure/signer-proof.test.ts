import { randomBytes } from 'node:crypto';
import { ComputeBudgetProgram, Keypair, SystemProgram, Transaction, type PublicKey, type TransactionInstruction } from '@solana/web3.js';
import bs58 from 'bs58';
import fc from 'fast-check';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { AuthorityHistory } from '../../src/chain/client/read/authority-history.js';
import { SignedSignatures } from '../../src/chain/client/read/signed-signatures.js';
import { MoveProofs } from '../../src/chain/client/nonce/move-proofs.js';
import { NonceMoves } from '../../src/chain/client/nonce/nonce-moves.js';
import { poolAddressSet, RecentValues } from '../../src/chain/client/read/signer-evidence.js';
import { advanceNonceInstruction, nonceAddress } from '../../src/chain/nonce-account.js';
import type { ChainRpc } from '../../src/chain/rpc/chain-rpc.js';
import type { TransactionSignatures } from '../../src/chain/rpc/rpc-answers.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { foreignTransactions, initialRole, roleAfterRead } from '../../src/machines/role.js';
import { captureLogs } from '../../test/support/log-capture.js';
import { checkProperty, propertyProfile } from '../support/profile.js';

/**
 * Invariant (issue 39): no halt and no stand-down without a verified foreign transaction. Random
 * sequences of what nodes may claim between two authority reads (nonce moves with values that
 * never existed, forged history entries, old genuine transactions re-listed, the operator's
 * `nonce init`, this process's own transactions) and of what a real twin does (a transaction
 * signed with the key, new), through the chain client's real judges (AuthorityHistory,
 * NonceMoves, MoveProofs) and the role: an active instance reports a second signer (and stands
 * by, or halts) exactly when a twin's transaction landed since the previous read, and every
 * such transaction is reported at the read after it landed.
 */

const CHAIN_ID = 3;
const SETTINGS = { handoffMs: 60_000, pollIntervalMs: 1_000 };

type Event =
  | { kind: 'twin'; advances: boolean }
  | { kind: 'own' }
  | { kind: 'forged' }
  | { kind: 'replayed' }
  | { kind: 'operator' }
  | { kind: 'forgedMove' };

const eventArbitrary: fc.Arbitrary<Event> = fc.oneof(
  fc.record({ kind: fc.constant('twin' as const), advances: fc.boolean() }),
  fc.constantFrom<Event>({ kind: 'own' }, { kind: 'forged' }, { kind: 'replayed' }, { kind: 'operator' }, { kind: 'forgedMove' }),
);

/** One chain as the reads see it: the key's history (newest first) and the transactions behind it. */
class ClaimedChain {
  readonly authority = Keypair.generate();
  readonly entries: Array<{ signature: string; slot: number }> = [];
  readonly transactions = new Map<string, TransactionSignatures>();
  readonly recent = new RecentValues();
  readonly signed = new SignedSignatures();
  readonly moves = new NonceMoves(captureLogs('info').logger);
  readonly lane = nonceAddress(this.authority.publicKey, CHAIN_ID, 0);
  laneValue = bs58.encode(randomBytes(32));
  slot = 10;
  /** A genuine transaction of the key from before the first read, not its newest. */
  old: { signature: string; slot: number } | undefined;

  readonly rpc = {
    chain: 'target',
    slotFloor: () => undefined,
    hasHistory: () => true,
    getSignaturesForAddress: async (_address: unknown, options: { until?: string; before?: string; limit: number }) => {
      // A re-listed entry is a copy on top: the original still marks where `until` is.
      const end = options.until === undefined ? this.entries.length : this.entries.findLastIndex((entry) => entry.signature === options.until);
      const start = options.before === undefined ? 0 : this.entries.findIndex((entry) => entry.signature === options.before) + 1;
      return this.entries
        .slice(start, end === -1 ? this.entries.length : end)
        .slice(0, options.limit)
        .map((entry) => ({ ...entry, err: null, blockTime: null }));
    },
    getTransactionSignatures: async (signature: string) => this.transactions.get(signature) ?? null,
    // Two honest endpoints: both hold the lane's real value (a forged one is the pool read's alone).
    getAccountInfoEverywhere: async () => ['a', 'b'].map((endpoint) => ({ endpoint, slot: this.slot, account: this.laneAccount() })),
  } as unknown as ChainRpc;

  laneAccount(): { owner: PublicKey; lamports: number; data: Uint8Array } {
    const data = Buffer.alloc(80);
    data.writeUInt32LE(1, 0);
    data.writeUInt32LE(1, 4);
    this.authority.publicKey.toBuffer().copy(data, 8);
    Buffer.from(bs58.decode(this.laneValue)).copy(data, 40);
    return { owner: SystemProgram.programId, lamports: 1, data };
  }

  /** Lands a transaction of `signer` (the key, or another payer listing it) with `blockhash`. */
  land(instructions: TransactionInstruction[], blockhash: string, forged = false): string {
    const transaction = new Transaction({ feePayer: this.authority.publicKey, blockhash, lastValidBlockHeight: 0 }).add(...instructions);
    const message = transaction.serializeMessage();
    transaction.sign(this.authority);
    const signature = forged ? randomBytes(64) : transaction.signature!;
    const id = bs58.encode(signature);
    this.transactions.set(id, { message, signers: [{ key: this.authority.publicKey.toBase58(), signature }] });
    this.slot += 1;
    this.entries.unshift({ signature: id, slot: this.slot });
    return id;
  }

  seenBlockhash(): string {
    const blockhash = bs58.encode(randomBytes(32));
    this.recent.saw(blockhash);
    return blockhash;
  }

  /** The pool read of a cycle: the lane's value as a node reports it. */
  observeLane(value: string): void {
    this.slot += 1;
    this.recent.saw(value);
    this.moves.observe(this.lane.toBase58(), value, this.slot);
  }
}

const memo = () => ComputeBudgetProgram.setComputeUnitLimit({ units: 1_000 });

/** Applies one event; returns whether it is a twin's transaction (a proof). */
function apply(chain: ClaimedChain, event: Event): boolean {
  switch (event.kind) {
    case 'twin': {
      if (!event.advances) {
        chain.land([memo()], chain.seenBlockhash());
        return true;
      }
      chain.land([advanceNonceInstruction(chain.lane, chain.authority.publicKey), memo()], chain.laneValue);
      chain.laneValue = bs58.encode(randomBytes(32));
      chain.observeLane(chain.laneValue);
      return true;
    }
    case 'own':
      chain.signed.add(chain.land([memo()], chain.seenBlockhash()));
      return false;
    case 'forged':
      chain.land([memo()], chain.seenBlockhash(), true);
      return false;
    case 'replayed':
      if (chain.old !== undefined) chain.entries.unshift({ ...chain.old, slot: (chain.slot += 1) });
      chain.land([memo()], bs58.encode(randomBytes(32)));
      return false;
    case 'operator': {
      const address = nonceAddress(chain.authority.publicKey, CHAIN_ID, 1);
      chain.land(
        [
          SystemProgram.transfer({ fromPubkey: chain.authority.publicKey, toPubkey: address, lamports: 1 }),
          SystemProgram.nonceInitialize({ noncePubkey: address, authorizedPubkey: chain.authority.publicKey }),
        ],
        chain.seenBlockhash(),
      );
      return false;
    }
    case 'forgedMove':
      chain.observeLane(bs58.encode(randomBytes(32)));
      return false;
  }
}

describe('second-signer proof (pure)', () => {
  it('no halt or stand-down without a verified foreign transaction, and every twin transaction is reported at the next read', async () => {
    await checkProperty(
      'signer proof',
      fc.asyncProperty(fc.array(fc.array(eventArbitrary, { maxLength: 5 }), { minLength: 1, maxLength: 8 }), async (reads) => {
        const chain = new ClaimedChain();
        const metrics = createMetrics(new Registry());
        const logger = captureLogs('info').logger;
        const history = new AuthorityHistory({
          rpc: chain.rpc,
          authority: chain.authority.publicKey,
          signed: chain.signed,
          recent: chain.recent,
          poolAddresses: poolAddressSet(chain.authority.publicKey, CHAIN_ID, 8),
          metrics,
          logger,
        });
        const proofs = new MoveProofs({ rpc: chain.rpc, authority: chain.authority.publicKey, metrics, logger });
        chain.old = { signature: chain.land([memo()], chain.seenBlockhash()), slot: chain.slot };
        // The baseline's newest entry, above the old one.
        chain.land([memo()], chain.seenBlockhash());
        chain.observeLane(chain.laneValue);
        await history.readNew(AbortSignal.timeout(5_000));
        let role = initialRole({ ...SETTINGS, handoffMs: 0 });
        for (const [i, events] of reads.entries()) {
          const twins = events.map((event) => apply(chain, event)).filter(Boolean).length;
          const { transactions } = await history.readNew(AbortSignal.timeout(5_000));
          const proven = await proofs.judge(chain.moves.drain(), transactions, AbortSignal.timeout(5_000));
          const view = { target: { balance: 0, ...proven }, source: { balance: 0, transactions: [] } };
          const decision = roleAfterRead(role, foreignTransactions(view, i), { ...SETTINGS, handoffMs: 0 }, i);
          role = decision.facts;
          expect(decision.foreign).toHaveLength(twins);
          // With the handoff on, an active instance stands by exactly when a twin's transaction landed.
          const standBy = roleAfterRead(
            { ...initialRole({ ...SETTINGS, handoffMs: 0 }), sinceMs: i, quietSinceMs: i },
            foreignTransactions(view, i),
            SETTINGS,
            i,
          );
          expect(standBy.change?.kind === 'standing_by').toBe(twins > 0);
        }
      }),
      propertyProfile() === 'long' ? 2_000 : 60,
    );
  }, 30_000);
});
