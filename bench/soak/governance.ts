import { PublicKey, type Keypair } from '@solana/web3.js';
import { resetPendingInstruction, setTokenPairInstruction } from '../../devnet/instructions.js';
import type { ChainPair } from '../../devnet/chain-pair.js';
import type { World } from '../../devnet/world/bootstrap.js';
import { devnetConnection, submitTransaction } from '../../devnet/world/submit.js';
import { sleep } from '../../src/time.js';

/**
 * The occasional governance change an operator sees on a live bridge, through JSON-RPC like any
 * user (injected faults hit it too): every `everyMs`, alternately `reset_pending` on the source
 * (Relaying deposits back to Initialized) and a `set_token_pair` on the destination that refills
 * the low-limit pair's limit (every non-finalized WithdrawEntry removed). Both add 1 to their
 * tracker's generation and rewind every authority, so the same index is legitimately voted on
 * again: the vote watch keys votes by generation (vote-watch.ts).
 */

export interface GovernanceChanges {
  /** Changes confirmed to this sender, by kind (the vote watch reads what landed from the ledger). */
  confirmed(): Record<string, number>;
  stop(): Promise<void>;
}

const LOW_LIMIT_REFILL = 1_000n;

export function startGovernanceChanges(
  pair: ChainPair,
  world: World,
  governance: Keypair,
  everyMs: number,
  onError: (err: unknown) => void,
): GovernanceChanges {
  const stopping = new AbortController();
  const source = devnetConnection(pair.source.url, stopping.signal);
  const target = devnetConnection(pair.target.url, stopping.signal);
  const confirmed: Record<string, number> = {};
  const lowLimit = world.tokenPairs.lowLimit;

  const changes = [
    {
      kind: 'reset_pending (source)',
      send: () =>
        submitTransaction(
          source,
          [
            resetPendingInstruction({
              programId: pair.source.programId,
              governance: governance.publicKey,
              depositTracker: new PublicKey(world.source.depositTracker),
            }),
          ],
          [governance],
          {
            chain: 'source',
            step: 'governance reset_pending',
            signal: stopping.signal,
          },
        ),
    },
    {
      kind: 'set_token_pair: low-limit pair refilled (destination)',
      send: () =>
        submitTransaction(
          target,
          [
            setTokenPairInstruction({
              programId: pair.target.programId,
              governance: governance.publicKey,
              withdrawTracker: new PublicKey(world.target.withdrawTracker),
              tokenPair: new PublicKey(lowLimit.address),
              sourceMint: lowLimit.sourceMint,
              targetMint: lowLimit.targetMint,
              frozen: lowLimit.frozen,
              limitRemaining: LOW_LIMIT_REFILL,
              vaultBalance: BigInt(lowLimit.vaultBalance),
            }),
          ],
          [governance],
          { chain: 'target', step: 'governance set_token_pair', signal: stopping.signal },
        ),
    },
  ];

  const running = (async () => {
    for (let step = 0; ; step++) {
      await sleep(everyMs, stopping.signal).catch(() => undefined);
      if (stopping.signal.aborted) return;
      const change = changes[step % changes.length]!;
      try {
        await change.send();
        confirmed[change.kind] = (confirmed[change.kind] ?? 0) + 1;
      } catch (err) {
        if (!stopping.signal.aborted) onError(err);
      }
    }
  })();

  return {
    confirmed: () => ({ ...confirmed }),
    stop: async () => {
      stopping.abort(new Error('governance changes stopped'));
      await running;
    },
  };
}
