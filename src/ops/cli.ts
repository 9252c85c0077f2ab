import { createInterface } from 'node:readline/promises';
import { setTimeout as delay } from 'node:timers/promises';
import { Command, CommanderError, Option } from 'commander';
import { CONFIRM_TIMEOUT_MS } from '../chain/client/submit/nonce-setup.js';
import { MAX_NONCE_ACCOUNTS } from '../chain/chain-settings.js';
import { describeError, isBridgeError } from '../errors.js';
import { escapeUnsafeCharacters } from '../text.js';
import { measuredSlotMs, type SlotSample } from '../machines/slot-clock.js';
import { parseParameters } from '../transfers/transfer-params.js';
import {
  createTransferQueries,
  MAX_TRANSFER_PAGE,
  transferIndexParams,
  type TransferPage,
  type TransferQueries,
} from '../transfers/transfer-queries.js';
import { loadOpsContext, loadOpsSigner, type OpsContext, type OpsSigner } from './context.js';
import { escalationDocument, ESCALATE_SIGNATURES, type Part, type SignatureSummary } from './escalate.js';
import { fetchHealth } from './health.js';
import { nonceInit, type Confirm } from './nonce.js';
import { describeSigner, renderStatus, renderTransfer } from './render.js';
import { MAX_STATUS_PAGES, statusReport } from './status.js';
import { addWatchdogCommands, auditLine } from './watchdog-commands.js';

/**
 * `npm run ops -- <command>`: operator commands over the server's own configuration
 * (docs/operating.md "Operating"), read-only but for `nonce init`, which creates the
 * authority's nonce accounts. Exit codes: 0 ok, 1 bad usage or configuration, 2 a chain unreachable,
 * 3 no such transfer index. Everything written goes through escapeUnsafeCharacters: chain data
 * and a /health answer cannot move the cursor, recolour or reorder the terminal.
 */

export const EXIT = { ok: 0, usage: 1, unreachable: 2, notFound: 3 } as const;

/** Every chain read of one command together; a hung endpoint cannot keep the CLI waiting. */
const COMMAND_TIMEOUT_MS = 60_000;

/** How long `nonce init` waits for the operator's answer; no answer is a no. */
const PROMPT_TIMEOUT_MS = 300_000;

/**
 * `nonce init` as a whole: its reads (COMMAND_TIMEOUT_MS), the question (PROMPT_TIMEOUT_MS),
 * and one setting-up transaction per account, each confirmed within CONFIRM_TIMEOUT_MS (120 s),
 * for at most MAX_NONCE_ACCOUNTS (8) accounts on each of the two chains: 38 min at most.
 */
const NONCE_INIT_TIMEOUT_MS = COMMAND_TIMEOUT_MS + PROMPT_TIMEOUT_MS + 2 * MAX_NONCE_ACCOUNTS * CONFIRM_TIMEOUT_MS;

/** What running `nonce init` against a live server does (its --help says so; docs/operating.md "Operating"). */
const NONCE_INIT_HELP = `
Before anything is paid it reads both trackers at the configured program ids and chain ids (as
\`ops status\` does: a wrong BRIDGE_SOURCE_CHAIN_ID or BRIDGE_TARGET_CHAIN_ID is refused), reads
each derived address (one someone already sent lamports to is set up all the same), checks the
authority's balance on each chain, prints what it will pay and asks. --yes pays without asking
(needed when stdin is not a terminal); --dry-run prints the plan and sends nothing.

Against a live server: run it while the server runs, no need to stop it. The server treats
these transactions as the operator's own (they create and initialize this key's own nonce
accounts: never a foreign signer), logs an info line, and switches each chain to nonce mode at
its next cycle (/health crank.landing_mode).`;

/** A yes or no on the terminal (stderr, so that stdout stays the command's output); no answer within PROMPT_TIMEOUT_MS is a no. */
function terminalConfirm(): Confirm | undefined {
  if (process.stdin.isTTY !== true) return undefined;
  return async (question) => {
    const terminal = createInterface({ input: process.stdin, output: process.stderr });
    try {
      return /^y(es)?$/i.test((await terminal.question(question, { signal: AbortSignal.timeout(PROMPT_TIMEOUT_MS) })).trim());
    } catch (err) {
      if (err instanceof Error && err.name === 'AbortError') return false;
      throw err;
    } finally {
      terminal.close();
    }
  };
}

interface Output {
  json: boolean;
  out(text: string): void;
}

/**
 * `ops status` measures the source slot time over its own reads (one more header read per
 * SLOT_TIME_POLL_MS after the pages) until they span SLOT_TIME_MIN_SLOTS slots: off by less
 * than (read duration + one slot) / 16, under 7 % with 400 ms slots. It waits at most
 * SLOT_TIME_MAX_WAIT_MS from its first read (about 6.4 s at 400 ms a slot); slower slots leave
 * the ages in slots.
 */
const SLOT_TIME_MIN_SLOTS = 16;
const SLOT_TIME_MAX_WAIT_MS = 10_000;
const SLOT_TIME_POLL_MS = 250;

async function sourceSlotMs(queries: TransferQueries, first: SlotSample, signal: AbortSignal): Promise<number | null> {
  for (;;) {
    const sample = { slot: (await queries.page({ from: 0, limit: 0 }, signal)).slots.source, atMs: performance.now() };
    if (sample.slot - first.slot >= SLOT_TIME_MIN_SLOTS) return measuredSlotMs([first, sample]);
    if (sample.atMs - first.atMs >= SLOT_TIME_MAX_WAIT_MS) return null;
    // A timer that holds the process open (src/time.ts's are unref'd): the CLI has nothing else pending.
    await delay(SLOT_TIME_POLL_MS, undefined, { signal });
  }
}

async function status(ctx: OpsContext, output: Output, signal: AbortSignal): Promise<void> {
  const queries = createTransferQueries(ctx.reads.readRange);
  const head = await queries.page({ from: 0, limit: 0 }, signal);
  const first = { slot: head.slots.source, atMs: performance.now() };
  const pages: TransferPage[] = [];
  let from = Number(head.source.settled_prefix);
  while (pages.length < MAX_STATUS_PAGES) {
    const page = await queries.page({ from, limit: MAX_TRANSFER_PAGE }, signal);
    pages.push(page);
    if (page.next === null) break;
    from = page.next;
  }
  const truncated = pages.at(-1)?.next !== null;
  const report = statusReport(pages, truncated, await sourceSlotMs(queries, first, signal));
  const authority = ctx.authority.toBase58();
  output.out(output.json ? JSON.stringify({ authority, signer: ctx.signer, ...report }) : renderStatus(report, authority, ctx.signer));
}

/** Refused like GET /transfers/:index refuses it (TRANSFER__INVALID_PARAMETER), before any read. */
function transferIndex(rawIndex: string): number {
  return parseParameters(transferIndexParams, { index: rawIndex }).index;
}

async function transfer(ctx: OpsContext, rawIndex: string, output: Output, signal: AbortSignal): Promise<void> {
  const view = await createTransferQueries(ctx.reads.readRange).transfer(transferIndex(rawIndex), signal);
  output.out(output.json ? JSON.stringify(view) : renderTransfer(view));
}

async function escalate(ctx: OpsContext, rawIndex: string, healthUrl: string | undefined, output: Output, signal: AbortSignal): Promise<void> {
  const view = await createTransferQueries(ctx.reads.readRange).transfer(transferIndex(rawIndex), signal);
  const [health, signatures] = await Promise.all([fetchHealth(healthUrl), recentSignatures(ctx, signal)]);
  const document = escalationDocument({
    generatedAt: new Date(),
    authority: ctx.authority.toBase58(),
    sourceChainId: ctx.crank.sourceChainId,
    targetChainId: ctx.crank.targetChainId,
    transfer: view,
    health,
    signatures,
  });
  output.out(JSON.stringify(document, null, output.json ? undefined : 2));
}

async function recentSignatures(
  ctx: OpsContext,
  signal: AbortSignal,
): Promise<Part<{ source: SignatureSummary[]; destination: SignatureSummary[] }>> {
  try {
    const { source, target } = await ctx.reads.recentSignatures(ctx.authority, ESCALATE_SIGNATURES, signal);
    const summary = (infos: typeof source): SignatureSummary[] =>
      infos.map((info) => ({ signature: info.signature, slot: info.slot, err: info.err, block_time: info.blockTime ?? null }));
    return { value: { source: summary(source), destination: summary(target) }, error: null };
  } catch (err) {
    return { value: null, error: describeError(err) };
  }
}

export function exitCodeOf(err: unknown): number {
  if (isBridgeError(err, 'TRANSFER__NOT_FOUND')) return EXIT.notFound;
  if (isBridgeError(err, 'CHAIN__RPC_FAILED')) return EXIT.unreachable;
  return EXIT.usage;
}

/** Loads what a command needs (the whole context, or only the signer), then runs it within `timeoutMs` (COMMAND_TIMEOUT_MS by default); prints failures. */
type Runner = <C>(
  load: (env: NodeJS.ProcessEnv) => Promise<C>,
  action: (ctx: C, output: Output, signal: AbortSignal) => Promise<void>,
  json: boolean,
  timeoutMs?: number,
) => Promise<void>;

/** The public key an operator registers (as an authority in both trackers), and which signer holds it. */
async function signer(ctx: OpsSigner, output: Output): Promise<void> {
  const authority = ctx.authority.toBase58();
  output.out(output.json ? JSON.stringify({ authority, signer: ctx.signer }) : `${authority}\n(held by ${describeSigner(ctx.signer)})`);
}

function program(run: Runner): Command {
  const jsonOption = () => new Option('--json', 'print JSON for machines');
  const cli = new Command('ops')
    .description('Operator commands over the bridge server configuration (BRIDGE_* variables); all read-only but nonce init and acknowledge')
    .exitOverride()
    .showHelpAfterError();
  cli
    .command('status')
    .description('both trackers side by side, which side is ahead, unsettled transfers per phase')
    .addOption(jsonOption())
    .action((options: { json?: boolean }) => run(loadOpsContext, (ctx, output, signal) => status(ctx, output, signal), options.json === true));
  cli
    .command('transfer')
    .description('one transfer on both chains: result, rule 3.1, voters, the SPEC §7 row that applies')
    .argument('<index>', 'transfer (deposit entry) index')
    .addOption(jsonOption())
    .action((index: string, options: { json?: boolean }) =>
      run(loadOpsContext, (ctx, output, signal) => transfer(ctx, index, output, signal), options.json === true),
    );
  cli
    .command('nonce')
    .description("the authority's durable-nonce accounts")
    .command('init')
    .description(
      'create the missing nonce accounts on both chains (BRIDGE_NONCE_ACCOUNTS each), signed and paid by the authority; prints what it pays and asks first',
    )
    .option('--yes', 'pay without asking')
    .option('--dry-run', 'print the plan and what it would pay; send nothing')
    .addOption(jsonOption())
    .addHelpText('after', NONCE_INIT_HELP)
    .action((options: { json?: boolean; yes?: boolean; dryRun?: boolean }) =>
      run(
        loadOpsContext,
        async (ctx, output, signal) => {
          const show = (text: string) => (output.json ? undefined : output.out(text));
          const choices = {
            yes: options.yes === true,
            dryRun: options.dryRun === true,
            confirm: terminalConfirm(),
            show,
            readTimeoutMs: COMMAND_TIMEOUT_MS,
          };
          const { json, text } = await nonceInit(ctx, choices, signal).catch((err: unknown) => {
            process.stderr.write(`${auditLine('ops nonce init', `failed: ${describeError(err)}`)}\n`);
            throw err;
          });
          process.stderr.write(`${auditLine(`ops nonce init${choices.dryRun ? ' --dry-run' : ''}`, 'done')}\n`);
          output.out(output.json ? JSON.stringify(json) : text);
        },
        options.json === true,
        NONCE_INIT_TIMEOUT_MS,
      ),
    );
  cli
    .command('escalate')
    .description('one JSON document with everything SPEC §7 says to collect when escalating')
    .argument('<index>', 'transfer (deposit entry) index')
    .option('--health <url>', "the /health URL of this authority's server")
    .addOption(jsonOption())
    .action((index: string, options: { health?: string; json?: boolean }) =>
      run(loadOpsContext, (ctx, output, signal) => escalate(ctx, index, options.health, output, signal), options.json === true),
    );
  cli
    .command('signer')
    .description(
      'the base58 public key of the key BRIDGE_AUTHORITY_KEYPAIR names (file, token or key service), to register it; needs no other variable',
    )
    .addOption(jsonOption())
    .action((options: { json?: boolean }) => run(loadOpsSigner, (ctx, output) => signer(ctx, output), options.json === true));
  addWatchdogCommands(cli, (action, json) =>
    run(
      async () => undefined,
      (_ctx, output) => action(output),
      json,
    ),
  );
  return cli;
}

async function main(argv: string[]): Promise<number> {
  let code: number = EXIT.ok;
  const run: Runner = async (load, action, json, timeoutMs = COMMAND_TIMEOUT_MS) => {
    // The server's waits are unref()'d (src/time.ts) so that they never hold a shutdown; here
    // nothing else may hold the process while a command waits for a bank to confirm, so the
    // command holds it until it ends (its own timeout bounds it).
    const keepAlive = setInterval(() => undefined, timeoutMs);
    try {
      const ctx = await load(process.env);
      await action(ctx, { json, out: (text) => process.stdout.write(`${escapeUnsafeCharacters(text)}\n`) }, AbortSignal.timeout(timeoutMs));
    } catch (err) {
      code = exitCodeOf(err);
      const message = isBridgeError(err, 'CONFIG__INVALID') ? err.context.problems.join('\n') : describeError(err);
      if (json) process.stdout.write(`${escapeUnsafeCharacters(JSON.stringify({ error: isBridgeError(err) ? err.code : 'ERROR', message }))}\n`);
      process.stderr.write(`ops: ${escapeUnsafeCharacters(message)}\n`);
    } finally {
      clearInterval(keepAlive);
    }
  };
  try {
    await program(run).parseAsync(argv, { from: 'user' });
  } catch (err) {
    if (!(err instanceof CommanderError)) throw err;
    return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
  }
  return code;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`ops: ${describeError(err)}\n`);
    process.exitCode = EXIT.usage;
  },
);
