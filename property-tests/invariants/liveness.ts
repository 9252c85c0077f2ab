import { decodeTokenPair } from '../../src/chain/codec/token-pair.js';
import { describeError } from '../../src/errors.js';
import { CLEANUP_GRACE_READS } from '../../src/machines/planning/cleanup-turns.js';
import { claimableEntries, type PropertyRun } from '../model/model.js';
import { unsettledDeposits } from './state-checks.js';

/**
 * 7. Liveness: once faults stop and users claim, every deposit reaches Finalized and cleaned up
 * (deposits on frozen or missing pairs included: they finalize Rejected and are refunded)
 * within LIVENESS_ROUNDS rounds. A round: users claim every claimable withdrawal, then every
 * honest crank runs one cycle.
 *
 * Why 8. A transfer needs three rounds: ack_deposit (the destination finalizes once threshold
 * honest authorities voted), ack_withdraw (the source finalizes), cleanup (a cycle plans it from
 * a read made after the finalization, so it is the next crank's cycle or the next round's).
 * What a sequence can leave behind costs at most one more round per chain: a byzantine or stale
 * proposal on the destination is voted down (threshold no) and the authority that completed the
 * no re-proposes in its retry, so the others approve one round later; likewise a wrong
 * proposal on the source. A cleanup whose turn a byzantine authority holds (it voted and never
 * cleans up) is an honest crank's CLEANUP_GRACE_READS reads later. Transactions left pending by
 * faults are resolved by the first call of their action. 3 + 1 + 1 + 2 = 7; one round of slack
 * makes 8, and the run records how many rounds each sequence needed (docs in
 * property-tests/README.md).
 */
const LIVENESS_ROUNDS = 6 + CLEANUP_GRACE_READS;
/**
 * Governance remedies at most this many stale nos in one liveness phase (each comes from a
 * transaction sent before the faults stopped or before the previous remedy, so there are few).
 */
const MAX_REMEDIES = 3;

/** Faults off, then rounds until every deposit is settled; throws an InvariantViolation after LIVENESS_ROUNDS. */
export async function drainToCompletion(run: PropertyRun): Promise<number> {
  const { system, checker } = run;
  system.faultsOff('source');
  system.faultsOff('target');
  system.note('liveness', 'faults off on both chains');
  let remedied = 0;
  let lastRound = LIVENESS_ROUNDS;
  for (let round = 1; round <= lastRound; round += 1) {
    // On Agave's banks a round reads what the previous one wrote at finalized (the source) and
    // claims what is Confirmed at confirmed: the argument above counts rounds, not bank lags.
    await system.finalityPassed();
    if (checker.staleNos.length > remedied) {
      if (remedied >= MAX_REMEDIES) throw checker.violation(`liveness round ${round}`, [`7: more than ${MAX_REMEDIES} stale nos to remedy`]);
      await remedyStaleNos(run, checker.staleNos.slice(remedied));
      remedied = checker.staleNos.length;
      lastRound = round - 1 + LIVENESS_ROUNDS;
      await system.finalityPassed();
    }
    for (const index of claimableEntries(system)) system.note(`liveness claim(${index})`, await system.participants.claim(index));
    for (const crank of system.honest) {
      let outcome: string;
      try {
        const report = await crank.cycle();
        outcome = JSON.stringify(report);
      } catch (err) {
        outcome = `failed: ${describeError(err)}`;
      }
      system.note(`liveness round ${round} crankCycle(${crank.slot})`, outcome);
      checker.check(`liveness round ${round}, crank ${crank.slot}`);
    }
    if (unsettledDeposits(system.ledger.state()).length === 0) return round;
  }
  const unsettled = unsettledDeposits(system.ledger.state()).map((problem) => `7: ${problem}`);
  throw checker.violation(`${LIVENESS_ROUNDS} liveness rounds without faults`, unsettled);
}

/**
 * An honest no that landed on an honest proposal after a reset (transaction-audit.ts) leaves the
 * entry one honest yes short for good: the voter's position is past it. Only governance can
 * clear it, as an operator would: reset the chain's pending work again (set_token_pair with the
 * normal pair as it is on the destination, reset_pending on the source), rewinding positions so
 * that every authority votes again; the liveness bound starts over from there.
 */
async function remedyStaleNos(
  run: PropertyRun,
  stale: ReadonlyArray<{ chain: 'source' | 'target'; index: number; signature: string }>,
): Promise<void> {
  const { system } = run;
  for (const chain of new Set(stale.map((no) => no.chain))) {
    const nos = stale.filter((no) => no.chain === chain).map((no) => `${no.index} (${no.signature.slice(0, 8)})`);
    const outcome =
      chain === 'target' ? await system.participants.setTokenPair('normal', normalPairNow(system)) : await system.participants.resetPending();
    system.note(`liveness remedy on the ${chain} chain for stale no(s) at ${nos.join(', ')}`, outcome);
  }
}

function normalPairNow(system: PropertyRun['system']) {
  const address = system.world.tokenPairs.normal.address;
  const account = system.pair.target.getAccount(address);
  if (account === undefined) throw new Error(`the normal TokenPair ${address} is missing on the destination`);
  const { frozen, limitRemaining, vaultBalance } = decodeTokenPair(account.data, address);
  return { frozen, limitRemaining, vaultBalance };
}
