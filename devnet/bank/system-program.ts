import type { InstructionAccount } from '../program/context.js';
import { SYSTEM_PROGRAM_ID, type AccountStore } from '../program/store.js';
import type { InstructionErrorDetail } from './transaction-error.js';

/**
 * The System program's `transfer` (instruction 2), checked in the order Agave's
 * system_processor checks it, so a transaction without the bridge program runs the same here
 * and on a cluster. The devnet runs no other System instruction.
 */

const TRANSFER = 2;
// SystemError::ResultWithNegativeLamports: the `from` account holds fewer lamports than it sends.
const RESULT_WITH_NEGATIVE_LAMPORTS = 1;

export function executeSystemInstruction(
  store: AccountStore,
  accounts: readonly InstructionAccount[],
  data: Uint8Array,
  log: (line: string) => void,
): InstructionErrorDetail | undefined {
  // bincode of SystemInstruction: u32 LE variant, then its fields; trailing bytes are ignored.
  if (data.length < 4) return 'InvalidInstructionData';
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const variant = view.getUint32(0, true);
  if (variant !== TRANSFER) {
    log(`System instruction ${variant} is not modelled by the devnet (it runs only transfer, instruction 2)`);
    return 'InvalidInstructionData';
  }
  if (data.length < 12) return 'InvalidInstructionData';
  const lamports = view.getBigUint64(4, true);
  const [from, to] = accounts;
  if (from === undefined || to === undefined) return 'NotEnoughAccountKeys';
  return transfer(store, from, to, lamports, log);
}

function transfer(
  store: AccountStore,
  from: InstructionAccount,
  to: InstructionAccount,
  lamports: bigint,
  log: (line: string) => void,
): InstructionErrorDetail | undefined {
  if (!from.isSigner) {
    log(`Transfer: \`from\` account ${from.address} must sign`);
    return 'MissingRequiredSignature';
  }
  const source = store.get(from.address);
  if (source !== undefined && source.data.length > 0) {
    log('Transfer: `from` must not carry data');
    return 'InvalidArgument';
  }
  const available = source?.lamports ?? 0n;
  if (lamports > available) {
    log(`Transfer: insufficient lamports ${available}, need ${lamports}`);
    return { Custom: RESULT_WITH_NEGATIVE_LAMPORTS };
  }
  const debit = setLamports(store, from, available - lamports);
  if (debit !== undefined) return debit;
  const target = store.get(to.address);
  return setLamports(store, to, (target?.lamports ?? 0n) + lamports);
}

/** BorrowedAccount::set_lamports: what the runtime allows a program to do to a balance. */
function setLamports(store: AccountStore, account: InstructionAccount, lamports: bigint): InstructionErrorDetail | undefined {
  const current = store.get(account.address);
  const balance = current?.lamports ?? 0n;
  // An address without an account reads as an empty account of the System program.
  const owned = current === undefined || current.owner === SYSTEM_PROGRAM_ID;
  if (!owned && lamports < balance) return 'ExternalAccountLamportSpend';
  if (!account.isWritable) return 'ReadonlyLamportChange';
  if (current?.executable === true) return 'ExecutableLamportChange';
  if (lamports === balance) return undefined;
  if (current === undefined) {
    store.create(account.address, { lamports, owner: SYSTEM_PROGRAM_ID, data: new Uint8Array(0), executable: false });
  } else {
    store.setLamports(account.address, lamports);
  }
  return undefined;
}
