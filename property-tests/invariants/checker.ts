import type { BridgeSystem } from '../system/bridge-system.js';
import { landedFrom, type ChainSide } from '../system/ledger.js';
import { cleanupConserves, finalizedTransfersAreTrue, finalizedWithDestinationResult } from './state-checks.js';
import { TransactionAudit, type Coverage } from './transaction-audit.js';

/**
 * Checks invariants 1 to 6, 8 and 12 after a command: first every transaction the chains landed
 * since the last check (in landing order), then the state the chains are in now, then the
 * cranks' health against the ledger. Throws an InvariantViolation listing every problem, with
 * the commands that led there.
 */

export class InvariantViolation extends Error {
  override readonly name = 'InvariantViolation';
}

const TRACE_LINES = 30;

export class InvariantChecker {
  private audited = 0;
  private lag = 0;
  private readonly audit: TransactionAudit;
  private readonly initialBalances: Map<string, bigint>;

  constructor(private readonly system: BridgeSystem) {
    const names = new Map<string, string>();
    for (const crank of system.honest) names.set(crank.authority, `honest authority ${crank.slot}`);
    for (const authority of system.byzantine) names.set(authority.authority, `byzantine authority ${authority.slot}`);
    this.audit = new TransactionAudit(new Map(system.honest.map((crank) => [crank.authority, crank.priorityFeeCap])), names);
    this.initialBalances = new Map(this.balances());
  }

  get coverage(): Coverage {
    return this.audit.coverage;
  }

  /** The honest nos that landed after a governance reset they were sent before (transaction-audit.ts, invariant 4). */
  get staleNos(): ReadonlyArray<{ chain: ChainSide; index: number; signature: string }> {
    return this.audit.staleNos;
  }

  /** Most transactions a crank had landed but not counted yet (the lag invariant 8 allows). */
  get maxHealthLag(): number {
    return this.lag;
  }

  /** Throws when any invariant fails; `after` names the command just run. */
  check(after: string): void {
    const problems = this.problems();
    if (problems.length > 0) throw this.violation(after, problems);
  }

  private problems(): string[] {
    const { ledger } = this.system;
    const problems = [...ledger.anomalies, ...ledger.unattributedBlocks()];
    for (const record of ledger.records.slice(this.audited)) problems.push(...this.audit.audit(record));
    this.audited = ledger.records.length;
    const state = ledger.state();
    problems.push(
      ...finalizedWithDestinationResult(state),
      ...cleanupConserves(state),
      ...finalizedTransfersAreTrue(state),
      ...this.audit.wrongProposalsFinalized(state),
      ...this.healthAgreesWithChain(),
      ...this.feesAccountForBalances(),
      ...this.noSignerWithoutProof(),
    );
    return problems;
  }

  violation(after: string, problems: string[]): InvariantViolation {
    const trace = this.system.trace.slice(-TRACE_LINES).map((line) => `  ${line}`);
    const crankLogs = this.system.honest.flatMap((crank) =>
      crank
        .recentProblems()
        .slice(-3)
        .map((line) => `  crank ${crank.slot}: ${line}`),
    );
    return new InvariantViolation(
      [
        `after ${after}:`,
        ...problems.map((problem) => `  - ${problem}`),
        'commands (-> what happened):',
        ...trace,
        ...(crankLogs.length > 0 ? ['latest crank warnings:', ...crankLogs] : []),
      ].join('\n'),
    );
  }

  /**
   * 8. Each crank's total_actions_submitted equals the transactions the chains landed from it
   * (executed or failed: a failed transaction is on chain and its fee was paid, and the crank
   * counts it), summed over the server's lives. The lags allowed: a transaction whose
   * confirmation the crank gave up on (and said so) that landed anyway is counted only when that
   * action runs again (README.md); one an earlier life sent and left in flight when the server
   * restarted may land uncounted (the new process knows only that the nonce moved).
   */
  private healthAgreesWithChain(): string[] {
    return this.system.honest.flatMap((crank) => {
      const problems: string[] = [];
      const who = `crank ${crank.slot}`;
      const reported = crank.totalSubmitted();
      const landed = new Set(landedFrom(this.system.ledger.records, crank.authority).map((record) => record.signature));
      if (reported !== crank.reportedLanded.size) {
        problems.push(
          `8: ${who} reports total_actions_submitted ${reported}, its attempt logs report ${crank.reportedLanded.size} landed transactions`,
        );
      }
      for (const signature of crank.reportedLanded) {
        if (!landed.has(signature)) problems.push(`8: ${who} counts transaction ${signature} as landed; the chains did not land it`);
      }
      // A void only advances the crank's own nonce: no action's transaction, never counted as one.
      const uncounted = [...landed].filter((signature) => !crank.reportedLanded.has(signature) && !crank.voids.has(signature));
      this.lag = Math.max(this.lag, uncounted.length);
      for (const signature of uncounted) {
        const unresolved = crank.declaredUnknown(signature) || crank.leftInFlight.has(signature);
        if (!unresolved || crank.settledWithError.has(signature)) {
          problems.push(`8: the chains landed ${signature} from ${who}, which the crank never counted`);
        }
      }
      return problems;
    });
  }

  /**
   * 12. No halt or stand-down without a verified foreign transaction (issue 39). The model runs
   * no second process on an honest authority's key (every transaction of that key is one of its
   * server's lives), so whatever a lying endpoint claims, an honest crank never reports another
   * signer (under BRIDGE_ON_FOREIGN_SIGNER=halt, which the property cranks run: a report halts)
   * and never leaves the active role. A real twin being caught is test/integration/signer-proof.test.ts's.
   */
  private noSignerWithoutProof(): string[] {
    return this.system.honest.flatMap((crank) => {
      const problems = crank.foreignReports.map(
        ({ chain, signature, halted }) =>
          `12: crank ${crank.slot} reported its own key's ${chain} transaction ${signature} as another signer's${halted ? ' and halted' : ''}; no other process holds its key`,
      );
      const { role } = crank.health();
      if (role !== 'active') problems.push(`12: crank ${crank.slot} is ${String(role)}, not active; no other process holds its key`);
      return problems;
    });
  }

  /**
   * Every lamport a fee payer lost is a fee of a transaction in the ledger: proof that the ledger
   * (and so invariants 4 and 8) saw every transaction the chains charged for, executed or failed.
   */
  private feesAccountForBalances(): string[] {
    const fees = new Map<string, bigint>();
    for (const record of this.system.ledger.records) {
      const key = `${record.chain}|${record.feePayer}`;
      fees.set(key, (fees.get(key) ?? 0n) + record.fee);
    }
    return this.balances().flatMap(([key, balance]) => {
      const spent = (this.initialBalances.get(key) ?? 0n) - balance;
      const charged = fees.get(key) ?? 0n;
      return spent === charged ? [] : [`8: ${key.replace('|', ' chain, ')} spent ${spent} lamports, the ledger's transactions charged it ${charged}`];
    });
  }

  private balances(): Array<[string, bigint]> {
    return (['source', 'target'] as ChainSide[]).flatMap((chain) =>
      this.system.feePayers.map((key): [string, bigint] => [`${chain}|${key}`, this.system.pair[chain].bank.account(key)?.lamports ?? 0n]),
    );
  }
}
