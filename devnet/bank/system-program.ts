import { createHash } from 'node:crypto';
import bs58 from 'bs58';
import { ByteReader } from '../../src/chain/codec/bytes.js';
import type { InstructionAccount } from '../program/context.js';
import { SYSTEM_PROGRAM_ID, type AccountStore } from '../program/store.js';
import { ADVANCE_NONCE_ACCOUNT, advanceNonceAccount, authorizeNonceAccount, initializeNonceAccount, withdrawNonceAccount } from './nonce-account.js';
import { accountAt, checkDataWritable, fail, loaded, setLamports, SystemFailure, type SystemCall } from './system-call.js';
import type { InstructionErrorDetail } from './transaction-error.js';

/**
 * The System program's instructions a bridge operator uses, checked in the order Agave's
 * system_processor checks them, so a transaction runs the same here and on a cluster:
 * CreateAccount (0), Assign (1), Transfer (2), CreateAccountWithSeed (3), the nonce
 * instructions (4 to 7, nonce-account.ts), Allocate (8), AllocateWithSeed (9) and
 * AssignWithSeed (10): `nonce init` sets up an address someone funded first with
 * AllocateWithSeed, Transfer and InitializeNonceAccount. Any other variant is refused with a
 * log line saying so.
 */

const CREATE_ACCOUNT = 0;
const ASSIGN = 1;
const TRANSFER = 2;
const CREATE_ACCOUNT_WITH_SEED = 3;
const WITHDRAW_NONCE_ACCOUNT = 5;
const INITIALIZE_NONCE_ACCOUNT = 6;
const AUTHORIZE_NONCE_ACCOUNT = 7;
const ALLOCATE = 8;
const ALLOCATE_WITH_SEED = 9;
const ASSIGN_WITH_SEED = 10;
// SystemError codes.
const ACCOUNT_ALREADY_IN_USE = 0;
const RESULT_WITH_NEGATIVE_LAMPORTS = 1;
const INVALID_ACCOUNT_DATA_LENGTH = 3;
const ADDRESS_WITH_SEED_MISMATCH = 5;
const MAX_PERMITTED_DATA_LENGTH = 10n * 1024n * 1024n;
const MAX_SEED_LEN = 32;
const PDA_MARKER = 'ProgramDerivedAddress';

export interface SystemInstructionInput {
  store: AccountStore;
  accounts: readonly InstructionAccount[];
  data: Uint8Array;
  blockhash: string;
  log: (line: string) => void;
}

export function executeSystemInstruction({ store, accounts, data, blockhash, log }: SystemInstructionInput): InstructionErrorDetail | undefined {
  const call: SystemCall = { store, accounts, blockhash, log, signers: new Set(accounts.filter((a) => a.isSigner).map((a) => a.address)) };
  try {
    // bincode (fixint, little-endian, trailing bytes allowed): a short read is InvalidInstructionData.
    run(call, new ByteReader(data, () => new SystemFailure('InvalidInstructionData')));
    return undefined;
  } catch (err) {
    if (err instanceof SystemFailure) return err.detail;
    throw err;
  }
}

function run(call: SystemCall, data: ByteReader): void {
  const variant = data.u32();
  switch (variant) {
    case CREATE_ACCOUNT: {
      const [lamports, space, owner] = [data.u64(), data.u64(), data.base58()];
      return createAccount(call, { address: accountAt(call, 1).address }, lamports, space, owner);
    }
    case TRANSFER: {
      const lamports = data.u64();
      const to = accountAt(call, 1);
      return transfer(call, call.accounts[0]!, to, lamports);
    }
    case CREATE_ACCOUNT_WITH_SEED: {
      const [base, seed, lamports, space, owner] = [data.base58(), seedString(data), data.u64(), data.u64(), data.base58()];
      const to = accountAt(call, 1).address;
      const derived = addressWithSeed(call, base, seed, owner);
      if (to !== derived) fail(call, { Custom: ADDRESS_WITH_SEED_MISMATCH }, `Create: address ${to} does not match derived address ${derived}`);
      return createAccount(call, { address: to, base }, lamports, space, owner);
    }
    case ADVANCE_NONCE_ACCOUNT:
      return advanceNonceAccount(call);
    case WITHDRAW_NONCE_ACCOUNT:
      return withdrawNonceAccount(call, data.u64());
    case INITIALIZE_NONCE_ACCOUNT:
      return initializeNonceAccount(call, data.base58());
    case AUTHORIZE_NONCE_ACCOUNT:
      return authorizeNonceAccount(call, data.base58());
    case ASSIGN: {
      const owner = data.base58();
      return assign(call, { address: accountAt(call, 0).address }, owner);
    }
    case ALLOCATE: {
      const space = data.u64();
      return allocate(call, { address: accountAt(call, 0).address }, space);
    }
    case ALLOCATE_WITH_SEED: {
      const [base, seed, space, owner] = [data.base58(), seedString(data), data.u64(), data.base58()];
      const to = seededAddress(call, base, seed, owner);
      allocate(call, to, space);
      return assign(call, to, owner);
    }
    case ASSIGN_WITH_SEED: {
      const [base, seed, owner] = [data.base58(), seedString(data), data.base58()];
      return assign(call, seededAddress(call, base, seed, owner), owner);
    }
    default:
      fail(call, 'InvalidInstructionData', `System instruction ${variant} is not modelled by the devnet (it runs 0 to 10)`);
  }
}

/** Address::create with a seed: account 0 must be sha256(base || seed || owner). */
function seededAddress(call: SystemCall, base: string, seed: string, owner: string): Address {
  const address = accountAt(call, 0).address;
  const derived = addressWithSeed(call, base, seed, owner);
  if (address !== derived) fail(call, { Custom: ADDRESS_WITH_SEED_MISMATCH }, `Create: address ${address} does not match derived address ${derived}`);
  return { address, base };
}

/** system_processor::allocate on account 0: signed, unused, at most 10 MiB; then BorrowedAccount::set_data_length. */
function allocate(call: SystemCall, to: Address, space: bigint): void {
  const account = call.accounts[0]!;
  const current = loaded(call, account);
  if (!call.signers.has(to.base ?? to.address)) fail(call, 'MissingRequiredSignature', `Allocate: 'to' account ${describeAddress(to)} must sign`);
  if (current.data.length > 0 || current.owner !== SYSTEM_PROGRAM_ID)
    fail(call, { Custom: ACCOUNT_ALREADY_IN_USE }, `Allocate: account ${describeAddress(to)} already in use`);
  if (space > MAX_PERMITTED_DATA_LENGTH) {
    fail(call, { Custom: INVALID_ACCOUNT_DATA_LENGTH }, `Allocate: requested ${space}, max allowed ${MAX_PERMITTED_DATA_LENGTH}`);
  }
  checkDataWritable(call, account);
  if (space === 0n) return;
  call.store.create(account.address, { lamports: current.lamports, owner: current.owner, data: new Uint8Array(Number(space)), executable: false });
}

/**
 * system_processor::assign on account 0: nothing to do when it already has that owner (no
 * signature needed); otherwise signed, then BorrowedAccount::set_owner (the System program's,
 * writable, not executable, data all zero, else ModifiedProgramId).
 */
function assign(call: SystemCall, to: Address, owner: string): void {
  const account = call.accounts[0]!;
  const current = loaded(call, account);
  if (current.owner === owner) return;
  if (!call.signers.has(to.base ?? to.address)) fail(call, 'MissingRequiredSignature', `Assign: account ${describeAddress(to)} must sign`);
  if (current.owner !== SYSTEM_PROGRAM_ID || !account.isWritable || current.executable || current.data.some((byte) => byte !== 0))
    fail(call, 'ModifiedProgramId');
  call.store.create(account.address, { lamports: current.lamports, owner, data: current.data.slice(), executable: false });
}

/** The `to` of a create: its address and, created with a seed, the base that signs for it. */
interface Address {
  address: string;
  base?: string;
}

// As Agave prints an Address with {:?}.
function describeAddress({ address, base }: Address): string {
  return `Address { address: ${address}, base: ${base === undefined ? 'None' : `Some(${base})`} }`;
}

/** Pubkey::create_with_seed: sha256(base || seed || owner). */
function addressWithSeed(call: SystemCall, base: string, seed: string, owner: string): string {
  if (Buffer.byteLength(seed) > MAX_SEED_LEN) fail(call, 'MaxSeedLengthExceeded');
  const ownerBytes = bs58.decode(owner);
  if (Buffer.from(ownerBytes.subarray(ownerBytes.length - PDA_MARKER.length)).toString('latin1') === PDA_MARKER) fail(call, 'IllegalOwner');
  return bs58.encode(createHash('sha256').update(bs58.decode(base)).update(seed).update(ownerBytes).digest());
}

/** create_account: allocate and assign `to` (which must be unused), then fund it from account 0. */
function createAccount(call: SystemCall, to: Address, lamports: bigint, space: bigint, owner: string): void {
  const account = call.accounts[1]!;
  const current = loaded(call, account);
  if (current.lamports > 0n) fail(call, { Custom: ACCOUNT_ALREADY_IN_USE }, `Create Account: account ${describeAddress(to)} already in use`);
  if (!call.signers.has(to.base ?? to.address)) fail(call, 'MissingRequiredSignature', `Allocate: 'to' account ${describeAddress(to)} must sign`);
  if (current.data.length > 0 || current.owner !== SYSTEM_PROGRAM_ID)
    fail(call, { Custom: ACCOUNT_ALREADY_IN_USE }, `Allocate: account ${describeAddress(to)} already in use`);
  if (space > MAX_PERMITTED_DATA_LENGTH) {
    fail(call, { Custom: INVALID_ACCOUNT_DATA_LENGTH }, `Allocate: requested ${space}, max allowed ${MAX_PERMITTED_DATA_LENGTH}`);
  }
  checkDataWritable(call, account);
  call.store.create(account.address, { lamports: 0n, owner, data: new Uint8Array(Number(space)), executable: false });
  transfer(call, call.accounts[0]!, account, lamports);
}

function transfer(call: SystemCall, from: InstructionAccount, to: InstructionAccount, lamports: bigint): void {
  if (!from.isSigner) fail(call, 'MissingRequiredSignature', `Transfer: \`from\` account ${from.address} must sign`);
  const source = loaded(call, from);
  if (source.data.length > 0) fail(call, 'InvalidArgument', 'Transfer: `from` must not carry data');
  if (lamports > source.lamports)
    fail(call, { Custom: RESULT_WITH_NEGATIVE_LAMPORTS }, `Transfer: insufficient lamports ${source.lamports}, need ${lamports}`);
  setLamports(call, from, source.lamports - lamports);
  setLamports(call, to, loaded(call, to).lamports + lamports);
}

/** A bincode String (a u64 length, then UTF-8); too long for the data or not UTF-8 is InvalidInstructionData. */
function seedString(data: ByteReader): string {
  const length = data.u64();
  if (length > BigInt(data.remaining)) throw new SystemFailure('InvalidInstructionData');
  const bytes = data.bytes(Number(length));
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new SystemFailure('InvalidInstructionData');
  }
}
