import bs58 from 'bs58';
import type { BankView } from '../../bank/commitment-banks.js';
import { describeTransactionError } from '../../bank/transaction-error.js';
import { InvalidTransactionError, MAX_TRANSACTION_SIZE, parseTransaction, verifySignatures, type DevnetTransaction } from '../../bank/transaction.js';
import { RPC_ERRORS, RpcError, historyNotAvailable, invalidParams } from '../errors.js';
import { tipPaid } from '../../faults/forwarding.js';
import { encodeAccount } from './accounts.js';
import { responseContext, type RpcMethod } from '../method.js';
import { arrayParam, base58Param, booleanParam, checkCommitment, configParam, integerParam, stringParam, type Config } from '../params.js';

/** sendTransaction, simulateTransaction, getSignatureStatuses, requestAirdrop. */

const MAX_SIGNATURE_STATUSES = 256;
// A node's limits on the encoded form of a 1232-byte transaction.
const MAX_ENCODED_SIZE = { base58: 1_683, base64: 1_644 } as const;

/**
 * Agave's send_transaction: the preflight runs on the bank of `preflightCommitment` (finalized
 * when none), `minContextSlot` judged against it; a transaction signed against a blockhash newer
 * than that bank fails its preflight with BlockhashNotFound, as on a cluster.
 */
const sendTransaction: RpcMethod = (params, { bank, faults, exchange, at }) => {
  const config = configParam(params[1], 'config');
  const tx = wireTransaction(params[0], config);
  const preflightBank = at({ commitment: checkCommitment(config, 'preflightCommitment'), minContextSlot: config['minContextSlot'] });
  if (config['maxRetries'] !== undefined && config['maxRetries'] !== null) integerParam(config['maxRetries'], 'maxRetries');
  const skipPreflight = booleanParam(config['skipPreflight'], 'skipPreflight', false);
  checkTip(tx, faults.requireTip);
  if (!skipPreflight) preflight(preflightBank, tx, faults.blockhashLagSlots);
  faults.received.received(tx.signature, bank.slot);
  if (faults.takeDroppedTransaction()) return tx.signature;
  bank.submit(tx, !skipPreflight, faults.landAfterSlots);
  const lost = faults.takeLostResponse();
  if (lost !== undefined) exchange.lostResponse = lost;
  return tx.signature;
};

/** A staked path's condition (`requireTip`): a transfer of at least the tip to its account inside the transaction. */
function checkTip(tx: DevnetTransaction, tip: { account: string; lamports: number } | null): void {
  if (tip === null || tipPaid(tx, tip.account) >= BigInt(tip.lamports)) return;
  throw invalidParams(`Invalid params: the transaction must transfer at least ${tip.lamports} lamports to the tip account ${tip.account}`);
}

function preflight(bank: BankView, tx: DevnetTransaction, blockhashLagSlots: number): void {
  if (!verifySignatures(tx)) throw signatureFailure();
  const { err, logs, unitsConsumed } = bank.simulate(tx, { checkBlockhash: true, blockhashLagSlots });
  if (err === null) return;
  throw new RpcError(RPC_ERRORS.SEND_TRANSACTION_PREFLIGHT_FAILURE, `Transaction simulation failed: ${describeTransactionError(err)}`, {
    err,
    logs,
    accounts: null,
    unitsConsumed,
    returnData: null,
  });
}

const simulateTransaction: RpcMethod = (params, { faults, at }) => {
  const config = configParam(params[1], 'config');
  const tx = wireTransaction(params[0], config);
  const bank = at(config);
  const sigVerify = booleanParam(config['sigVerify'], 'sigVerify', false);
  const replaceRecentBlockhash = booleanParam(config['replaceRecentBlockhash'], 'replaceRecentBlockhash', false);
  if (sigVerify && replaceRecentBlockhash) throw invalidParams('Invalid params: sigVerify may not be used with replaceRecentBlockhash');
  if (sigVerify && !verifySignatures(tx)) throw signatureFailure();
  const addresses = requestedAccounts(config);
  const result = bank.simulate(tx, {
    checkBlockhash: !replaceRecentBlockhash,
    blockhashLagSlots: faults.blockhashLagSlots,
    accounts: addresses ?? [],
  });
  return {
    context: responseContext(bank),
    value: {
      err: result.err,
      logs: result.logs,
      accounts: addresses === undefined ? null : result.accounts.map((account) => (account === undefined ? null : encodeAccount(account))),
      unitsConsumed: faults.simulateUnitsConsumed ?? result.unitsConsumed,
      returnData: null,
      ...(replaceRecentBlockhash ? { replacementBlockhash: bank.latestBlockhash(faults.blockhashLagSlots) } : {}),
    },
  };
};

// A node without history knows the statuses of its status cache only: about the last 300 slots.
const STATUS_CACHE_SLOTS = 300;

/**
 * Agave's get_signature_statuses: from the processed bank (its context slot), whatever the
 * config says; each status's confirmationStatus by the bank that has it (finalized at or below
 * the root, with confirmations null; confirmed at or below the optimistically confirmed slot;
 * else processed), and `confirmations` the slots built on it since.
 */
const getSignatureStatuses: RpcMethod = (params, { faults, at }) => {
  const signatures = arrayParam(params[0], 'signatures', MAX_SIGNATURE_STATUSES).map((s, i) => base58Param(s, `signatures[${i}]`, 64));
  const config = configParam(params[1], 'config');
  const search = booleanParam(config['searchTransactionHistory'], 'searchTransactionHistory', false);
  if (search && faults.noHistory) throw historyNotAvailable();
  const bank = at({ commitment: 'processed' });
  const oldestKnown = faults.noHistory ? bank.slot - STATUS_CACHE_SLOTS : -Infinity;
  return {
    context: responseContext(bank),
    value: signatures.map((signature) => {
      const status = bank.signatureStatus(signature);
      if (status === undefined || status.slot <= oldestKnown) return null;
      const finalized = status.slot <= bank.finalizedSlot;
      return {
        slot: status.slot,
        confirmations: finalized ? null : bank.slot - status.slot,
        err: status.err,
        status: status.err === null ? { Ok: null } : { Err: status.err },
        confirmationStatus: finalized ? 'finalized' : status.slot <= bank.confirmedSlot ? 'confirmed' : 'processed',
      };
    }),
  };
};

const requestAirdrop: RpcMethod = (params, { bank }) => {
  // The airdrop lands in the head's open slot, as a faucet's transfer does; its commitment only says what to wait for.
  const address = base58Param(params[0], 'pubkey', 32);
  const lamports = integerParam(params[1], 'lamports', 1);
  checkCommitment(configParam(params[2], 'config'));
  return bank.airdrop(address, BigInt(lamports));
};

export const transactionMethods = { sendTransaction, simulateTransaction, getSignatureStatuses, requestAirdrop };

function wireTransaction(value: unknown, config: Config): DevnetTransaction {
  const encoded = stringParam(value, 'transaction');
  const encoding = config['encoding'] ?? 'base58';
  if (encoding !== 'base58' && encoding !== 'base64') {
    throw invalidParams(`Invalid params: encoding ${JSON.stringify(encoding)} is not supported for transactions; use "base64" or "base58"`);
  }
  if (encoded.length > MAX_ENCODED_SIZE[encoding]) {
    throw invalidParams(
      `${encoding} encoded transaction too large: ${encoded.length} bytes (max: encoded/raw ${MAX_ENCODED_SIZE[encoding]}/${MAX_TRANSACTION_SIZE})`,
    );
  }
  try {
    return parseTransaction(decodeWire(encoded, encoding));
  } catch (err) {
    if (err instanceof InvalidTransactionError) throw invalidParams(err.message);
    throw err;
  }
}

function decodeWire(encoded: string, encoding: 'base58' | 'base64'): Uint8Array {
  if (encoding === 'base64') {
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(encoded) || encoded.length % 4 !== 0) throw invalidParams('invalid base64 encoding of transaction');
    return Buffer.from(encoded, 'base64');
  }
  try {
    return bs58.decode(encoded);
  } catch {
    throw invalidParams('invalid base58 encoding of transaction');
  }
}

function requestedAccounts(config: Config): string[] | undefined {
  const accounts = config['accounts'];
  if (accounts === undefined || accounts === null) return undefined;
  const request = configParam(accounts, 'accounts');
  const encoding = request['encoding'] ?? 'base64';
  if (encoding !== 'base64')
    throw invalidParams(`Invalid params: accounts.encoding ${JSON.stringify(encoding)} is not supported by the devnet; use "base64"`);
  return arrayParam(request['addresses'], 'accounts.addresses', 100).map((a, i) => base58Param(a, `accounts.addresses[${i}]`, 32));
}

function signatureFailure(): RpcError {
  return new RpcError(RPC_ERRORS.TRANSACTION_SIGNATURE_VERIFICATION_FAILURE, 'Transaction signature verification failure');
}
