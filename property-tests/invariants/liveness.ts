import { describeError } from '../../src/errors.js';
import { claimableEntries, type PropertyRun } from '../model/model.js';
import { unsettledDeposits } from './state-checks.js';

/**
 * 7. Liveness: once faults stop and users claim, every deposit reaches Finalized and cleaned up
 * (deposits on frozen or missing pairs included: they finalize Rejected and are refunded)
 * within LIVENESS_ROUNDS rounds. A round: users claim every claimable withdrawal, then every
 * honest crank runs one cycle.
 *
 * Why 6. A transfer needs three rounds: ack_deposit (the destination finalizes once threshold
 * honest authorities voted), ack_withdraw (the source finalizes), cleanup (a cycle plans it from
 * a read made after the finalization, so it is the next crank's cycle or the next round's).
 * What a sequence can leave behind costs at most one more round per chain: a byzantine or stale
 * proposal on the destination is voted down (threshold no) and the authority that completed the
 * no re-proposes in its retry, so the others approve one round later; likewise a wrong
 * proposal on the source. Transactions left pending by faults are resolved by the first call of
 * their action. 3 + 1 + 1 = 5; one round of slack makes 6, and the run records how many rounds
 * each sequence needed (docs in property-tests/README.md).
 */
const LIVENESS_ROUNDS = 6;

/** Faults off, then rounds until every deposit is settled; throws an InvariantViolation after LIVENESS_ROUNDS. */
export async function drainToCompletion(run: PropertyRun): Promise<number> {
  const { system, checker } = run;
  system.faultsOff('source');
  system.faultsOff('target');
  system.note('liveness', 'faults off on both chains');
  for (let round = 1; round <= LIVENESS_ROUNDS; round += 1) {
    // On Agave's banks a round reads what the previous one wrote at finalized (the source) and
    // claims what is Confirmed at confirmed: the argument above counts rounds, not bank lags.
    await system.finalityPassed();
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
