import { createHash } from 'node:crypto';
import { PublicKey } from '@solana/web3.js';
import type { AccountStore } from './store.js';

/**
 * The bridge program's deployment as the BPF upgradeable loader keeps it (PROTOCOL.md, the
 * program's deployment): the program account (tag 2, the programdata address) and the
 * programdata account (tag 3, the deployment slot, the upgrade authority, then the program
 * bytes). The devnet runs its program in TypeScript, so the bytes stand for a version: an
 * upgrade (`devnet_upgradeProgram`, `--upgrade-program`) rewrites them and the slot, as
 * `solana program deploy` would, so that an operator can rehearse the watchdog noticing it.
 */

const BPF_UPGRADEABLE_LOADER_ID = 'BPFLoaderUpgradeab1e11111111111111111111111';
const PROGRAMDATA_METADATA_SIZE = 45;
/** The room a deployment reserves for its bytes (`--max-len`): the bytes of a version are zero-padded to it. */
const PROGRAM_BYTES_ROOM = 1024;
/** The upgrade authority of a devnet's program unless an upgrade names another: a fixed key nobody holds. */
const DEVNET_UPGRADE_AUTHORITY = new PublicKey(createHash('sha256').update('devnet bridge program upgrade authority').digest()).toBase58();

export interface ProgramDeployment {
  programData: string;
  deploySlot: number;
  upgradeAuthority: string | null;
  /** sha256 (hex) of the program bytes without their zero padding, as `solana-verify get-program-hash` prints it. */
  hash: string;
}

function programDataAddress(programId: PublicKey): PublicKey {
  return PublicKey.findProgramAddressSync([programId.toBuffer()], new PublicKey(BPF_UPGRADEABLE_LOADER_ID))[0];
}

/** The bytes that stand for `version` of the program. */
function programBytes(version: string): Uint8Array {
  return new TextEncoder().encode(`bridge program ${version}`);
}

/** Writes the programdata account for `version` at `slot` (the program account is the bank's genesis account). */
export function deployProgram(
  store: AccountStore,
  programId: PublicKey,
  slot: number,
  version: string,
  upgradeAuthority: string | null = DEVNET_UPGRADE_AUTHORITY,
): ProgramDeployment {
  const bytes = programBytes(version);
  if (bytes.length > PROGRAM_BYTES_ROOM)
    throw new RangeError(`a program version of ${bytes.length} bytes exceeds the ${PROGRAM_BYTES_ROOM} bytes reserved`);
  const data = new Uint8Array(PROGRAMDATA_METADATA_SIZE + PROGRAM_BYTES_ROOM);
  const view = Buffer.from(data.buffer);
  view.writeUInt32LE(3, 0);
  view.writeBigUInt64LE(BigInt(slot), 4);
  if (upgradeAuthority !== null) {
    data[12] = 1;
    data.set(new PublicKey(upgradeAuthority).toBytes(), 13);
  }
  data.set(bytes, PROGRAMDATA_METADATA_SIZE);
  const address = programDataAddress(programId).toBase58();
  store.create(address, { lamports: 8_000_000n, owner: BPF_UPGRADEABLE_LOADER_ID, data, executable: false });
  return { programData: address, deploySlot: slot, upgradeAuthority, hash: createHash('sha256').update(bytes).digest('hex') };
}
