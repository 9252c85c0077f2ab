import { VersionedTransaction } from '@solana/web3.js';
import { expect, type TestContext } from 'vitest';
import { decodeInstructionData } from '../../../src/chain/codec/instructions.js';
import { sleep } from '../../../src/time.js';
import { landedTransactionsOf } from '../../support/base-fees.js';
import { waitFor } from '../../support/wait-for.js';
import { serverHealth, startAuthorityServer, type AuthorityServer } from './authority-server.js';
import { depositTracker } from './chain-state.js';
import { runRound, startBridgeCranks } from './cranks.js';
import { startDevnetBridge, type DevnetBridge } from './devnet-bridge.js';
import { expectSettled } from './expectations.js';
import { initNonces } from './nonces.js';
import { depositRejected } from './settle.js';

/**
 * Restart with a vote in flight, two real server processes one after the other for authority 0
 * (`node dist/index.js`, BRIDGE_HANDOFF_SECS=0, nonce mode), issue 31: the first sends its vote,
 * the chain keeps it in flight (`landAfterSlots`), the process is killed (SIGKILL: nothing of
 * its memory survives) and a second one starts on the same key. Whatever it re-signs, it signs
 * against the same nonce value as the vote in flight, so of the two at most one lands. Authority
 * 1 cranks in-process; with threshold 2 every transfer needs authority 0's votes.
 */

/** The scenario's slots: its in-flight delay and the second life's re-sign pace are counted in them. */
const SLOT_MS = 50;
/** In-flight delay: 100 slots of 50 ms, about 5 s, long enough for the kill and the restart to fall inside it. */
const IN_FLIGHT_SLOTS = 100;
/** The in-flight delay and a server start (at most 10 s for its startup line, ServerProcess) with room. */
const IN_FLIGHT_LANDED_MS = IN_FLIGHT_SLOTS * SLOT_MS + 10_000;
/** One poll interval and one cycle of the first server, reading and sending once. */
const FIRST_SEND_MS = 10_000;
const SETTLE_MS = 20_000;
/** Between two rounds of authority 1 while the second server cranks on its own 1 s timer. */
const ROUND_PAUSE_MS = 200;
const TRANSFERS = 2;
/** The test's pauses run to their end: nothing cancels them. */
const UNCANCELLED = new AbortController().signal;

/** Every bridge vote a landed transaction of authority `k` carried, as `chain instruction index`, with the transaction's error. */
function landedVotes(b: DevnetBridge, k: number): Array<{ vote: string; err: unknown; signature: string }> {
  return landedTransactionsOf(b.pair, b.authorities[k]!.publicKey).flatMap(({ chain, signature, err, wire }) => {
    const { message } = VersionedTransaction.deserialize(wire);
    const keys = message.staticAccountKeys;
    return message.compiledInstructions
      .filter((ix) => keys[ix.programIdIndex]!.equals(b.programId))
      .map((ix) => decodeInstructionData(ix.data))
      .flatMap((ix) =>
        ix.name === 'ack_deposit' || ix.name === 'ack_withdraw' ? [{ vote: `${chain} ${ix.name} ${ix.index}`, err, signature }] : [],
      );
  });
}

function start(b: DevnetBridge): Promise<AuthorityServer> {
  return startAuthorityServer(b, { BRIDGE_POLL_INTERVAL_SECS: '1', BRIDGE_HANDOFF_SECS: '0' });
}

/**
 * The scenario, with `depositsWhileDown` more transfers made between the kill and the restart:
 * 0, and the second life plans the first life's vote again; more, and it plans a larger one, a
 * different transaction against the same nonce value.
 */
export async function restartInFlight(depositsWhileDown: number, onTestFinished: TestContext['onTestFinished']): Promise<void> {
  const b = await startDevnetBridge({ slotIntervalMs: SLOT_MS });
  onTestFinished(() => b.close());
  await initNonces(b, [0, 1]);
  const [other] = await startBridgeCranks(b, [1]);
  await depositRejected(b, TRANSFERS);
  const { target } = b.pair;
  target.faults.set({ landAfterSlots: IN_FLIGHT_SLOTS });

  const first = await start(b);
  await waitFor(() => target.bank.inFlight > 0, { timeoutMs: FIRST_SEND_MS, intervalMs: 20, what: 'the first server sending its ack_deposit' });
  first.process.child.kill('SIGKILL');
  expect(await first.process.exited).toEqual({ code: null, signal: 'SIGKILL' });
  // Killed with the vote in flight: nothing of authority 0 landed yet.
  expect(landedVotes(b, 0)).toEqual([]);
  await depositRejected(b, depositsWhileDown);

  const second = await start(b);
  expect(await serverHealth(second)).toMatchObject({ code: 200, role: 'active' });
  await waitFor(() => landedVotes(b, 0).length > 0, { timeoutMs: IN_FLIGHT_LANDED_MS, intervalMs: 50, what: "authority 0's first vote landing" });
  target.faults.clear();

  const transfers = TRANSFERS + depositsWhileDown;
  const deadline = Date.now() + SETTLE_MS;
  while (depositTracker(b).header.settledPrefix < BigInt(transfers)) {
    if (Date.now() > deadline) throw new Error(`transfers not settled within ${SETTLE_MS} ms`);
    await runRound([other!]);
    await sleep(ROUND_PAUSE_MS, UNCANCELLED);
  }
  expectSettled(b, transfers, [0, 1]);

  for (const k of [0, 1]) {
    const votes = landedVotes(b, k);
    expect(
      votes.filter((landed) => landed.err !== null),
      `authority ${k}: landed with an error`,
    ).toEqual([]);
    const twice = votes.filter((landed, i) => votes.findIndex((earlier) => earlier.vote === landed.vote) !== i);
    expect(twice, `authority ${k}: a vote carried by two landed transactions`).toEqual([]);
  }
  // What the second life made of the vote in flight. With the same plan and price it signs the
  // first life's transaction byte for byte (same instructions, same nonce value, deterministic
  // Ed25519): the landing is its own. With a larger plan its versions differ, the first life's
  // (sent first) lands, and the second life excuses that move of the first value it saw.
  const firstVote = landedVotes(b, 0).find((landed) => landed.vote.startsWith('target ack_deposit'));
  const secondLife = second.process.logs();
  const ownLanded = secondLife.some((record) => record['msg'] === 'transaction landed' && record['signature'] === firstVote!.signature);
  const excused = secondLife.filter((record) => String(record['msg']).startsWith('a nonce moved from the value this process first saw')).length;
  const resigned = secondLife.filter((record) => String(record['msg']).startsWith('not landed yet: signed again')).length;
  const failed = secondLife
    .filter((record) => record['outcome'] === 'failed')
    .map((record) => String((record['err'] as { message?: unknown } | undefined)?.message));
  const secondLifeActs = secondLife
    .filter((record) => typeof record['action'] === 'string' || record['msg'] === 'transaction landed')
    .map((record) => `${String(record['msg'])} ${JSON.stringify(record['signature'] ?? record['signatures'] ?? '')}`);
  const story =
    `restart in flight (${depositsWhileDown} deposits while down): the vote in flight landed as ${ownLanded ? "the second life's own" : "the first life's"} transaction; ` +
    `the second life re-priced ${resigned} time(s), excused ${excused} nonce move(s), failed attempts: ${JSON.stringify(failed)}; its actions: ${secondLifeActs.join(' | ')}`;
  console.info(story);
  if (depositsWhileDown === 0 && !ownLanded) {
    // The scenario's premise missed: on a loaded machine (one run in six here) the restart
    // outlasted the in-flight delay, so the first life's copy landed before the second life
    // signed the vote again. Then the second life must find the vote counted (already_done); the
    // claims above (every transfer done, nothing carried twice, nothing landed with an error) hold
    // either way.
    expect(
      secondLife.some((record) => record['action'] === 'ack_deposit' && record['outcome'] === 'already_done'),
      story,
    ).toBe(true);
    return;
  }
  if (depositsWhileDown > 0 && excused === 0 && resigned === 0 && signedAfterLanding(b, firstVote!.signature, secondLife)) {
    // The same premise missed with a deposit made while down: the first life's copy landed before
    // the second life signed anything, so its one vote went against the next nonce value and
    // nothing moved under it (the claims above hold either way).
    expect(ownLanded, story).toBe(false);
    return;
  }
  expect(ownLanded, story).toBe(depositsWhileDown === 0);
  expect(excused, story).toBe(depositsWhileDown === 0 ? 0 : 1);
}

/** Every ack_deposit the second life landed reached the chain after `firstSignature` landed there. */
function signedAfterLanding(b: DevnetBridge, firstSignature: string, secondLife: ReadonlyArray<Record<string, unknown>>): boolean {
  const { target } = b.pair;
  const landedAt = target.bank.signatureStatus(firstSignature)?.slot;
  const votes = secondLife
    .filter((record) => record['action'] === 'ack_deposit' && record['outcome'] === 'landed')
    .flatMap((record) => record['signatures'] as string[]);
  return landedAt !== undefined && votes.length > 0 && votes.every((signature) => (target.receivedSlot(signature) ?? -1) > landedAt);
}
