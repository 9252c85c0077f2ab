import { BridgeError } from '../../errors.js';
import { FRAMEWORK_ERRORS, programErrorName } from '../program-errors.js';
import type { Base58 } from '../types.js';
import { ByteReader, ByteWriter, KEY_SIZE, toHex } from './bytes.js';
import { readDepositResultArg, writeDepositResultArg, type DepositResultArg } from './deposit-result.js';
import { DISCRIMINATOR_SIZE, anchorDiscriminator } from './layout.js';

export { depositResultFromArg, depositResultToArg, type DepositResultArg } from './deposit-result.js';

/**
 * Instruction data (PROTOCOL.md "Instructions"): sha256("global:<name>")[0..8], then the
 * arguments in Borsh. Decoding follows Anchor: the same failures the program reports as
 * framework codes 100, 101 and 102 throw CHAIN__MALFORMED_INSTRUCTION with that anchorCode,
 * so the devnet can report them exactly.
 */

export type BridgeInstruction =
  | { name: 'ack_deposit'; index: bigint; approve: boolean; amount: bigint; recipient: Base58; sourceMint: Base58 }
  | { name: 'ack_withdraw'; index: bigint; approve: boolean; result: DepositResultArg }
  | { name: 'cleanup_deposit'; index: bigint }
  | { name: 'initialize_deposit_tracker'; targetChainId: number; capacity: bigint; threshold: number; authorities: Base58[] }
  | { name: 'initialize_withdraw_tracker'; sourceChainId: number; capacity: bigint; threshold: number; authorities: Base58[] }
  | { name: 'deposit'; amount: bigint; recipient: Base58; sourceMint: Base58 }
  | { name: 'withdraw'; index: bigint }
  | { name: 'set_token_pair'; sourceMint: Base58; targetMint: Base58; frozen: boolean; limitRemaining: bigint; vaultBalance: bigint }
  | { name: 'reset_pending' };

export type InstructionName = BridgeInstruction['name'];
export type InstructionOf<N extends InstructionName> = Extract<BridgeInstruction, { name: N }>;
/** The arguments of one instruction, without its name. */
export type InstructionArgs<N extends InstructionName> = Omit<InstructionOf<N>, 'name'>;

const INSTRUCTION_NAMES: readonly InstructionName[] = [
  'ack_deposit',
  'ack_withdraw',
  'cleanup_deposit',
  'initialize_deposit_tracker',
  'initialize_withdraw_tracker',
  'deposit',
  'withdraw',
  'set_token_pair',
  'reset_pending',
];

export const INSTRUCTION_DISCRIMINATORS = Object.fromEntries(
  INSTRUCTION_NAMES.map((name) => [name, anchorDiscriminator('global', name)]),
) as Readonly<Record<InstructionName, Uint8Array>>;

const NAME_BY_DISCRIMINATOR = new Map(INSTRUCTION_NAMES.map((name) => [toHex(INSTRUCTION_DISCRIMINATORS[name]), name]));

export function encodeInstructionData(ix: BridgeInstruction): Uint8Array {
  const writer = new ByteWriter().raw(INSTRUCTION_DISCRIMINATORS[ix.name]);
  writeArgs(writer, ix);
  return writer.toBytes();
}

function writeArgs(w: ByteWriter, ix: BridgeInstruction): void {
  switch (ix.name) {
    case 'ack_deposit':
      w.u64(ix.index, 'index').bool(ix.approve, 'approve').u64(ix.amount, 'amount');
      w.base58(ix.recipient, 'recipient').base58(ix.sourceMint, 'sourceMint');
      return;
    case 'ack_withdraw':
      w.u64(ix.index, 'index').bool(ix.approve, 'approve');
      writeDepositResultArg(w, ix.result, 'result');
      return;
    case 'cleanup_deposit':
    case 'withdraw':
      w.u64(ix.index, 'index');
      return;
    case 'initialize_deposit_tracker':
      w.u16(ix.targetChainId, 'targetChainId').u64(ix.capacity, 'capacity').u8(ix.threshold, 'threshold');
      writeKeyVec(w, ix.authorities, 'authorities');
      return;
    case 'initialize_withdraw_tracker':
      w.u16(ix.sourceChainId, 'sourceChainId').u64(ix.capacity, 'capacity').u8(ix.threshold, 'threshold');
      writeKeyVec(w, ix.authorities, 'authorities');
      return;
    case 'deposit':
      w.u64(ix.amount, 'amount').base58(ix.recipient, 'recipient').base58(ix.sourceMint, 'sourceMint');
      return;
    case 'set_token_pair':
      w.base58(ix.sourceMint, 'sourceMint').base58(ix.targetMint, 'targetMint').bool(ix.frozen, 'frozen');
      w.u64(ix.limitRemaining, 'limitRemaining').u64(ix.vaultBalance, 'vaultBalance');
      return;
    case 'reset_pending':
      return;
  }
}

function writeKeyVec(w: ByteWriter, keys: readonly Base58[], field: string): void {
  w.u32(keys.length, `${field}.length`);
  for (const [i, key] of keys.entries()) w.base58(key, `${field}[${i}]`);
}

/** The bridge instruction whose discriminator leads `data`; undefined for any other data. */
export function instructionNameOf(data: Uint8Array): InstructionName | undefined {
  if (data.length < DISCRIMINATOR_SIZE) return undefined;
  return NAME_BY_DISCRIMINATOR.get(toHex(data.subarray(0, DISCRIMINATOR_SIZE)));
}

/** Decodes instruction data exactly as the program would, or throws CHAIN__MALFORMED_INSTRUCTION. */
export function decodeInstructionData(data: Uint8Array): BridgeInstruction {
  if (data.length < DISCRIMINATOR_SIZE) {
    throw malformedInstruction('unknown', `data has ${data.length} bytes, fewer than the 8-byte discriminator`, FRAMEWORK_ERRORS.InstructionMissing);
  }
  const name = instructionNameOf(data);
  if (name === undefined) {
    const discriminator = toHex(data.subarray(0, DISCRIMINATOR_SIZE));
    throw malformedInstruction('unknown', `discriminator ${discriminator} is not a bridge instruction`, FRAMEWORK_ERRORS.InstructionFallbackNotFound);
  }
  const args = new ArgReader(name, data.subarray(DISCRIMINATOR_SIZE));
  const ix = readArgs(args, name);
  args.end();
  return ix;
}

function readArgs(r: ArgReader, name: InstructionName): BridgeInstruction {
  switch (name) {
    case 'ack_deposit':
      return { name, index: r.u64(), approve: r.bool('approve'), amount: r.u64(), recipient: r.key(), sourceMint: r.key() };
    case 'ack_withdraw':
      return { name, index: r.u64(), approve: r.bool('approve'), result: readDepositResultArg(r.bytes) };
    case 'cleanup_deposit':
    case 'withdraw':
      return { name, index: r.u64() };
    case 'initialize_deposit_tracker':
      return { name, targetChainId: r.u16(), capacity: r.u64(), threshold: r.u8(), authorities: r.keyVec('authorities') };
    case 'initialize_withdraw_tracker':
      return { name, sourceChainId: r.u16(), capacity: r.u64(), threshold: r.u8(), authorities: r.keyVec('authorities') };
    case 'deposit':
      return { name, amount: r.u64(), recipient: r.key(), sourceMint: r.key() };
    case 'set_token_pair':
      return {
        name,
        sourceMint: r.key(),
        targetMint: r.key(),
        frozen: r.bool('frozen'),
        limitRemaining: r.u64(),
        vaultBalance: r.u64(),
      };
    case 'reset_pending':
      return { name };
  }
}

/** Borsh argument reading where every failure is InstructionDidNotDeserialize (102). */
class ArgReader {
  readonly bytes: ByteReader;
  readonly #name: InstructionName;

  constructor(name: InstructionName, args: Uint8Array) {
    this.#name = name;
    this.bytes = new ByteReader(args, (offset, size, available) =>
      this.#fail(`arguments end early: needs ${size} bytes at argument offset ${offset}, ${available} remain`),
    );
  }

  u8(): number {
    return this.bytes.u8();
  }

  u16(): number {
    return this.bytes.u16();
  }

  u64(): bigint {
    return this.bytes.u64();
  }

  key(): Base58 {
    return this.bytes.base58();
  }

  bool(field: string): boolean {
    const value = this.bytes.u8();
    if (value > 1) throw this.#fail(`bool argument ${field} is ${value}, expected 0 or 1`);
    return value === 1;
  }

  keyVec(field: string): Base58[] {
    const length = this.bytes.u32();
    // Checked before allocating: a forged length must not make the decoder build a huge array.
    if (length * KEY_SIZE > this.bytes.remaining) {
      throw this.#fail(`Vec argument ${field} declares ${length} keys, only ${this.bytes.remaining} bytes remain`);
    }
    return Array.from({ length }, () => this.key());
  }

  end(): void {
    if (this.bytes.remaining > 0) throw this.#fail(`${this.bytes.remaining} trailing bytes after the arguments`);
  }

  #fail(reason: string): BridgeError<'CHAIN__MALFORMED_INSTRUCTION'> {
    return malformedInstruction(this.#name, reason, FRAMEWORK_ERRORS.InstructionDidNotDeserialize);
  }
}

function malformedInstruction(instruction: string, reason: string, anchorCode: number): BridgeError<'CHAIN__MALFORMED_INSTRUCTION'> {
  return new BridgeError('CHAIN__MALFORMED_INSTRUCTION', { instruction, reason, anchorCode }, { anchorName: programErrorName(anchorCode) ?? '' });
}
