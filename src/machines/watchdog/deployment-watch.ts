import type { BridgeWatch, DeploymentAnswer, EndpointAnswers } from '../../chain/port/bridge-watch.js';
import { CHAINS, chainName, type ChainSide } from '../../domain.js';
import { describeError } from '../../errors.js';
import type { Logger } from '../../log/logger.js';
import type { Metrics } from '../../metrics/metrics.js';
import { setLongTimeout } from '../../time.js';

/**
 * The bridge program's deployment on each chain (PROTOCOL.md, the program's deployment by the BPF upgradeable loader), read
 * at start and every DEPLOYMENT_CHECK_INTERVAL_MS from every endpoint in service, at finalized.
 * A deployment counts only when every answer agrees and at least two endpoints answered (one,
 * where only one is configured); answers that disagree are a warn line and decide nothing. A
 * change after the first read is a warn line and bridge_program_changes_total; with
 * BRIDGE_<CHAIN>_PROGRAM_HASH set, bytes that hash otherwise hold signing on that chain until
 * they match again (bridge_program_hash_mismatch).
 */

/** The cadence: an upgrade is noticed within this plus one read (two small slices per endpoint and chain; the bytes once per deployment). */
export const DEPLOYMENT_CHECK_INTERVAL_MS = 60_000;

export interface DeploymentWatch {
  holds(): Record<ChainSide, string | null>;
  stop(): void;
}

type Deployed = Extract<DeploymentAnswer, { hash: string }>;

export function createDeploymentWatch(options: {
  watch: BridgeWatch;
  programHashes: Partial<Record<ChainSide, string>>;
  logger: Logger;
  metrics: Metrics;
  intervalMs: number;
}): DeploymentWatch {
  const { watch, programHashes, logger: log, metrics } = options;
  const known: Partial<Record<ChainSide, Deployed>> = {};
  // With a hash to match, nothing is signed there before a read shows the program matches it.
  const unread = (chain: ChainSide) =>
    programHashes[chain] === undefined ? null : `the bridge program's hash is not read yet (BRIDGE_${chain.toUpperCase()}_PROGRAM_HASH is set)`;
  const held: Record<ChainSide, string | null> = { source: unread('source'), target: unread('target') };
  let stopped = false;
  let timer: { clear(): void } | undefined;
  const controller = new AbortController();
  for (const chain of CHAINS) {
    metrics.programChanges.inc({ chain }, 0);
    metrics.programHashMismatch.set({ chain }, 0);
  }

  async function check(): Promise<void> {
    try {
      const answers = await watch.readDeployments(AbortSignal.any([controller.signal, AbortSignal.timeout(options.intervalMs)]));
      for (const chain of CHAINS) judge(chain, answers[chain]);
    } catch (err) {
      if (!stopped) log.warn({ err: describeError(err) }, "watchdog: the bridge program's deployment was not read; the next read is in one interval");
    }
    if (!stopped) timer = setLongTimeout(() => void check(), options.intervalMs);
  }

  function judge(chain: ChainSide, { endpoints, answers }: EndpointAnswers<DeploymentAnswer>): void {
    const deployed = answers.filter((answer): answer is Deployed => 'hash' in answer);
    const problems = answers.filter((answer) => 'problem' in answer);
    const shapes = new Set(deployed.map(shapeOf));
    if (problems.length > 0 || shapes.size > 1) {
      log.warn(
        { chain, answers },
        `watchdog: the endpoints of the ${chainName(chain)} chain do not agree on the bridge program's deployment; nothing is decided from it`,
      );
      return;
    }
    if (deployed.length < Math.min(2, Math.max(1, endpoints))) return;
    const now = deployed[0]!;
    const before = known[chain];
    known[chain] = now;
    metrics.programDeploySlot.set({ chain }, Number(now.deploySlot));
    const fields = { chain, programData: now.programData, deploySlot: now.deploySlot, upgradeAuthority: now.upgradeAuthority, hash: now.hash };
    if (before === undefined) log.info(fields, `watchdog: the bridge program on the ${chainName(chain)} chain`);
    else if (shapeOf(before) !== shapeOf(now)) {
      metrics.programChanges.inc({ chain });
      log.warn(
        {
          ...fields,
          before: { programData: before.programData, deploySlot: before.deploySlot, upgradeAuthority: before.upgradeAuthority, hash: before.hash },
        },
        `watchdog: the bridge program on the ${chainName(chain)} chain changed (upgraded at slot ${now.deploySlot})`,
      );
    }
    const expected = programHashes[chain];
    if (expected === undefined) return;
    const variable = `BRIDGE_${chain.toUpperCase()}_PROGRAM_HASH`;
    if (now.hash !== expected) {
      if (held[chain] === null || held[chain] === unread(chain))
        log.error(
          { ...fields, expected },
          `watchdog: the bridge program on the ${chainName(chain)} chain hashes to ${now.hash}, not ${variable} (${expected}); signing on that chain is held until it matches`,
        );
      held[chain] = `the bridge program's bytes hash to ${now.hash}, not ${variable}`;
      metrics.programHashMismatch.set({ chain }, 1);
    } else {
      if (held[chain] !== null)
        log.info(fields, `watchdog: the bridge program on the ${chainName(chain)} chain matches ${variable} again; signing there resumes`);
      held[chain] = null;
      metrics.programHashMismatch.set({ chain }, 0);
    }
  }

  void check();
  return {
    holds: () => ({ ...held }),
    stop: () => {
      stopped = true;
      controller.abort(new Error('watchdog stopped'));
      timer?.clear();
    },
  };
}

function shapeOf(answer: Deployed): string {
  return `${answer.programData}|${answer.deploySlot}|${answer.upgradeAuthority ?? 'immutable'}|${answer.hash}`;
}
