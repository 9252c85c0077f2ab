import { randomBytes } from 'node:crypto';
import { PublicKey } from '@solana/web3.js';
import pkcs11js from 'pkcs11js';
import { type BridgeError, isBridgeError, type SignerFailure } from '../../errors.js';
import type { AuthoritySigner, SignerDescription } from '../authority-signer.js';
import { firstLine, signerFailure } from '../signer-failure.js';
import { verifiedSignature } from '../verified-signature.js';
import { Pkcs11CallError, Pkcs11Thread } from './pkcs11-thread.js';

/**
 * The authority key inside a token reached through a PKCS#11 module (an HSM, a cloud HSM's
 * library, SoftHSM in tests): the private key never enters this process, which holds one
 * logged-in session and asks the token for each signature (CKM_EDDSA).
 *
 * A failed signature drops the session (a token removed or an HSM restarted invalidates it);
 * the next signature opens a new one, logs in and finds the key again, which must still be the
 * same public key. Each signature therefore costs at most one re-open, and the crank's attempts
 * (BRIDGE_CRANK_MAX_ATTEMPTS, with backoff) bound how often it is tried; whether a failure is
 * tried again is src/failure-policy.ts's decision from the `reason` reported here.
 *
 * PKCS#11 allows one operation at a time per session: signatures are queued, at most one per
 * chain's sender (two) waiting. Every call into the module runs on a thread of its own and is
 * cut after PKCS11_CALL_TIMEOUT_MS (pkcs11-thread.ts): a hung C_Sign is a retryable
 * SIGNER__UNAVAILABLE, never a blocked event loop. A module that says it is no longer
 * initialized, or that its device was removed, is finalized and initialized again before the
 * next session is opened.
 */

// PKCS#11 3.0 values that pkcs11js does not name.
const CKM_EDDSA = 0x1057;
const CKK_EC_EDWARDS = 0x40;
const CKF_TOKEN_INITIALIZED = 0x400;
// Ed25519's curve as CKA_EC_PARAMS in the forms tokens use: the OID 1.3.101.112 (RFC 8410),
// GnuPG's OID 1.3.6.1.4.1.11591.15.1, or its name as a PrintableString or UTF8String
// ("edwards25519" in PKCS#11 3.0, "Ed25519" on Thales Luna).
const ED25519_OIDS = ['2b6570', '2b06010401da470f01'];
const ED25519_NAMES = ['edwards25519', 'ed25519'];
const DER_OID = 0x06;
const DER_STRINGS = [0x13, 0x0c];
const ED25519_SIGNATURE_BYTES = 64;
// More keys than this matching one URI is a selection problem, whatever the exact count.
const MAX_MATCHES = 16;

// Results after which the session (or the module's view of the token) is gone: re-open.
const SESSION_LOST = new Set([
  'CKR_SESSION_HANDLE_INVALID',
  'CKR_SESSION_CLOSED',
  'CKR_DEVICE_REMOVED',
  'CKR_TOKEN_NOT_PRESENT',
  'CKR_DEVICE_ERROR',
  'CKR_USER_NOT_LOGGED_IN',
  'CKR_KEY_HANDLE_INVALID',
  'CKR_OBJECT_HANDLE_INVALID',
  'CKR_TOKEN_NOT_RECOGNIZED',
  'CKR_SLOT_ID_INVALID',
]);
// Results after which the module itself must be finalized and initialized again.
const MODULE_RESET = new Set(['CKR_CRYPTOKI_NOT_INITIALIZED', 'CKR_DEVICE_REMOVED']);
const LOGIN_REFUSED = new Set(['CKR_PIN_INCORRECT', 'CKR_PIN_LOCKED', 'CKR_PIN_EXPIRED', 'CKR_PIN_INVALID', 'CKR_PIN_LEN_RANGE']);

export interface Pkcs11Options {
  modulePath: string;
  token?: string;
  serial?: string;
  slotId?: number;
  object?: string;
  id?: Uint8Array;
  /** Used to log in at start and at every re-open; never logged or put in an error. */
  pin: string;
}

interface OpenSession {
  /** The token's label as the module reports it, for /health and the ops CLI. */
  token: string;
  session: Buffer;
  privateKey: Buffer;
  publicKey: PublicKey;
}

/** Loads the module, logs in, finds the key pair and proves it with one signature; throws SIGNER__UNAVAILABLE saying what is wrong. */
export async function openPkcs11Signer(options: Pkcs11Options, callTimeoutMs?: number): Promise<Pkcs11Signer> {
  const thread = new Pkcs11Thread(options.modulePath, callTimeoutMs);
  await startModule(thread, options.modulePath);
  let open: OpenSession;
  try {
    open = await openSession(thread, options);
  } catch (err) {
    await thread.close();
    throw err;
  }
  const signer = new Pkcs11Signer(thread, options, open);
  try {
    await verifiedSignature(signer, randomBytes(32));
  } catch (err) {
    await thread.close();
    if (isBridgeError(err, 'SIGNER__UNAVAILABLE') && err.context.reason === 'key_mismatch') {
      throw failure(
        'key_mismatch',
        'the private key does not sign for the public key found beside it (same label/id); the token holds a mismatched pair',
        err,
      );
    }
    const code = resultCode((err as Error).cause) ?? firstLine(err);
    throw failure('sign_failed', `the key does not sign (${code}); it needs CKA_SIGN and a token that supports CKM_EDDSA`, err);
  }
  return signer;
}

export class Pkcs11Signer implements AuthoritySigner {
  readonly publicKey: PublicKey;
  readonly #thread: Pkcs11Thread;
  readonly #options: Pkcs11Options;
  readonly #token: string;
  #open: OpenSession | undefined;
  #reinitialize = false;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(thread: Pkcs11Thread, options: Pkcs11Options, open: OpenSession) {
    this.#thread = thread;
    this.#options = options;
    this.#open = open;
    this.publicKey = open.publicKey;
    this.#token = open.token;
  }

  sign(message: Uint8Array): Promise<Uint8Array> {
    const next = this.#queue.then(() => this.#signNow(message));
    this.#queue = next.catch(() => undefined);
    return next;
  }

  describe(): SignerDescription {
    return { kind: 'pkcs11', token: this.#token, session: this.#open === undefined ? 'lost' : 'open' };
  }

  /** Stops the module's thread (server shutdown, tests). */
  close(): Promise<void> {
    return this.#thread.close();
  }

  /** Keeps the PIN and handles out of logs and inspectors. */
  toJSON(): string {
    return `Pkcs11Signer(${this.#token}, ${this.publicKey.toBase58()})`;
  }

  async #signNow(message: Uint8Array): Promise<Uint8Array> {
    const open = this.#open ?? (await this.#reopen());
    try {
      await this.#thread.call('C_SignInit', open.session, { mechanism: CKM_EDDSA }, open.privateKey);
      return Uint8Array.from(await this.#thread.call<Buffer>('C_Sign', open.session, Buffer.from(message), Buffer.alloc(ED25519_SIGNATURE_BYTES)));
    } catch (err) {
      await this.#drop(open);
      if (isBridgeError(err, 'SIGNER__UNAVAILABLE')) throw err;
      const code = resultCode(err);
      if (code !== undefined && MODULE_RESET.has(code)) this.#reinitialize = true;
      const reason: SignerFailure = code !== undefined && (SESSION_LOST.has(code) || MODULE_RESET.has(code)) ? 'session_lost' : 'sign_failed';
      throw failure(reason, `the token refused to sign (${code ?? firstLine(err)}); the next signature re-opens the session and logs in again`, err);
    }
  }

  async #reopen(): Promise<OpenSession> {
    await startModule(this.#thread, this.#options.modulePath);
    if (this.#reinitialize) {
      await reinitialize(this.#thread, this.#options.modulePath);
      this.#reinitialize = false;
    }
    const open = await openSession(this.#thread, this.#options);
    if (!open.publicKey.equals(this.publicKey)) {
      await this.#drop(open);
      throw failure(
        'key_changed',
        `the key found after re-opening the session is ${open.publicKey.toBase58()}, not ${this.publicKey.toBase58()}; restart the server to take a new key`,
      );
    }
    this.#open = open;
    return open;
  }

  async #drop(open: OpenSession): Promise<void> {
    this.#open = undefined;
    try {
      await this.#thread.call('C_CloseSession', open.session);
    } catch {
      // The session is already gone (or the module's thread): that is why it is dropped.
    }
  }
}

/** Loads the module on its thread (when it has none running) and initializes it. */
function startModule(thread: Pkcs11Thread, modulePath: string): Promise<void> {
  return thread
    .start(() => initialize(thread, modulePath))
    .catch((err: unknown) => {
      if (isBridgeError(err, 'SIGNER__UNAVAILABLE')) throw err;
      throw failure(
        'module_not_loaded',
        `module-path ${JSON.stringify(modulePath)} cannot be loaded (${firstLine(err)}); install the vendor's PKCS#11 module or fix the path`,
        err,
      );
    });
}

async function initialize(thread: Pkcs11Thread, modulePath: string): Promise<void> {
  try {
    // The module is called from more than one thread over its life (a fresh one after a hang): it must lock.
    await thread.call('C_Initialize', { flags: pkcs11js.CKF_OS_LOCKING_OK });
  } catch (err) {
    if (isBridgeError(err, 'SIGNER__UNAVAILABLE')) throw err;
    const code = resultCode(err);
    if (code === 'CKR_CRYPTOKI_ALREADY_INITIALIZED') return;
    const advice = code === 'CKR_GENERAL_ERROR' ? `; ${configurationAdvice(modulePath)}` : '';
    throw failure('module_not_loaded', `module ${JSON.stringify(modulePath)} failed to initialize (${code ?? firstLine(err)})${advice}`, err);
  }
}

/**
 * CKR_GENERAL_ERROR from C_Initialize is how modules say they could not read their own
 * configuration (SoftHSM without a readable softhsm2.conf, a vendor client without its config).
 */
function configurationAdvice(modulePath: string): string {
  if (/softhsm/i.test(modulePath))
    return 'the module could not read its configuration: set SOFTHSM2_CONF to a softhsm2.conf this user can read, whose directories.tokendir holds the token';
  return "the module could not read its configuration: set the vendor's configuration variable or file (see its PKCS#11 guide) for this user";
}

/** After CKR_CRYPTOKI_NOT_INITIALIZED or CKR_DEVICE_REMOVED: C_Finalize (whatever it answers), then C_Initialize. */
async function reinitialize(thread: Pkcs11Thread, modulePath: string): Promise<void> {
  try {
    await thread.call('C_Finalize');
  } catch (err) {
    if (isBridgeError(err, 'SIGNER__UNAVAILABLE')) throw err;
    // Not initialized any more: C_Initialize below is what it needs.
  }
  await initialize(thread, modulePath);
}

async function openSession(thread: Pkcs11Thread, options: Pkcs11Options): Promise<OpenSession> {
  const { slot, label: token } = await findSlot(thread, options);
  let session: Buffer;
  try {
    session = await thread.call<Buffer>('C_OpenSession', slot, pkcs11js.CKF_SERIAL_SESSION);
  } catch (err) {
    if (isBridgeError(err, 'SIGNER__UNAVAILABLE')) throw err;
    throw failure('session_lost', `cannot open a session with the token (${resultCode(err) ?? firstLine(err)})`, err);
  }
  try {
    await login(thread, session, options.pin);
    const privateKey = await findOne(thread, session, pkcs11js.CKO_PRIVATE_KEY, options, 'private key');
    await checkEd25519(thread, session, privateKey);
    return { token, session, privateKey, publicKey: await readPublicKey(thread, session, privateKey, options) };
  } catch (err) {
    try {
      await thread.call('C_CloseSession', session);
    } catch {
      // Reporting the first failure matters more than a session that closes itself.
    }
    if (isBridgeError(err, 'SIGNER__UNAVAILABLE')) throw err;
    throw failure('session_lost', `cannot read the key's objects in the token (${resultCode(err) ?? firstLine(err)})`, err);
  }
}

async function findSlot(thread: Pkcs11Thread, options: Pkcs11Options): Promise<{ slot: Buffer; label: string }> {
  const tokens = await presentTokens(thread);
  const matching = tokens.filter(({ slot, label, serial }) => {
    if (options.token !== undefined && label !== options.token) return false;
    if (options.serial !== undefined && serial !== options.serial) return false;
    return options.slotId === undefined || slot.readUInt32LE(0) === options.slotId;
  });
  const wanted = selectionText(options, ['token', 'serial', 'slotId']) || 'any token';
  const present = tokens.map(({ label }) => JSON.stringify(label)).join(', ') || 'none';
  if (matching.length === 0) {
    const store =
      tokens.length === 0 && /softhsm/i.test(options.modulePath)
        ? '; SoftHSM reads its tokens from the directories.tokendir of the softhsm2.conf SOFTHSM2_CONF names (else /etc/softhsm/softhsm2.conf): set SOFTHSM2_CONF to the store holding the token'
        : '';
    throw failure('token_not_found', `no initialized token matches ${wanted} (tokens present: ${present})${store}`);
  }
  if (matching.length > 1) throw failure('token_not_found', `${matching.length} tokens match ${wanted} (${present}); add serial= to pick one`);
  return matching[0]!;
}

async function presentTokens(thread: Pkcs11Thread): Promise<{ slot: Buffer; label: string; serial: string }[]> {
  try {
    const slots = await thread.call<Buffer[]>('C_GetSlotList', true);
    const tokens = await Promise.all(slots.map(async (slot) => ({ slot, info: await thread.call<pkcs11js.TokenInfo>('C_GetTokenInfo', slot) })));
    return tokens
      .filter(({ info }) => (info.flags & CKF_TOKEN_INITIALIZED) !== 0)
      .map(({ slot, info }) => ({ slot, label: info.label.trimEnd(), serial: info.serialNumber.trimEnd() }));
  } catch (err) {
    if (isBridgeError(err, 'SIGNER__UNAVAILABLE')) throw err;
    throw failure('token_not_found', `cannot list the module's tokens (${resultCode(err) ?? firstLine(err)})`, err);
  }
}

async function login(thread: Pkcs11Thread, session: Buffer, pin: string): Promise<void> {
  try {
    await thread.call('C_Login', session, pkcs11js.CKU_USER, pin);
  } catch (err) {
    if (isBridgeError(err, 'SIGNER__UNAVAILABLE')) throw err;
    const code = resultCode(err);
    if (code === 'CKR_USER_ALREADY_LOGGED_IN') return;
    if (code !== undefined && LOGIN_REFUSED.has(code))
      throw failure('login_refused', `the token refused the PIN (${code}); check the file pin-source names`, err);
    throw failure('session_lost', `cannot log in to the token (${code ?? firstLine(err)})`, err);
  }
}

async function findOne(thread: Pkcs11Thread, session: Buffer, objectClass: number, options: Pkcs11Options, what: string): Promise<Buffer> {
  const template: pkcs11js.Template = [{ type: pkcs11js.CKA_CLASS, value: objectClass }];
  if (options.object !== undefined) template.push({ type: pkcs11js.CKA_LABEL, value: options.object });
  if (options.id !== undefined) template.push({ type: pkcs11js.CKA_ID, value: Buffer.from(options.id) });
  await thread.call('C_FindObjectsInit', session, template);
  let found: Buffer[];
  try {
    found = await thread.call<Buffer[]>('C_FindObjects', session, MAX_MATCHES);
  } finally {
    await thread.call('C_FindObjectsFinal', session);
  }
  const wanted = selectionText(options, ['object', 'id']);
  if (found.length === 0)
    throw failure('key_not_found', `no ${what} matches ${wanted} in the token; check object=/id= (pkcs11-tool --list-objects shows them)`);
  if (found.length > 1) throw failure('key_not_found', `${found.length} ${what}s match ${wanted}; add id= to pick one`);
  return found[0]!;
}

async function checkEd25519(thread: Pkcs11Thread, session: Buffer, privateKey: Buffer): Promise<void> {
  const [keyType] = await thread.call<pkcs11js.Attribute[]>('C_GetAttributeValue', session, privateKey, [{ type: pkcs11js.CKA_KEY_TYPE }]);
  const type = keyType?.value instanceof Buffer ? ulong(keyType.value) : undefined;
  if (type !== CKK_EC_EDWARDS)
    throw failure(
      'not_ed25519',
      `the key is not an Ed25519 key (CKA_KEY_TYPE 0x${type?.toString(16) ?? '?'}); Solana signs with Ed25519 (CKK_EC_EDWARDS)`,
    );
}

/** A CK_ULONG attribute: 8 bytes on 64-bit Linux, 4 on Windows and 32-bit platforms. */
function ulong(value: Buffer): number | undefined {
  if (value.length === 8) return Number(value.readBigUInt64LE());
  return value.length === 4 ? value.readUInt32LE() : undefined;
}

/** The public key object beside the private one (same CKA_ID, or the same label when it has none). */
async function readPublicKey(thread: Pkcs11Thread, session: Buffer, privateKey: Buffer, options: Pkcs11Options): Promise<PublicKey> {
  const [idAttribute] = await thread.call<pkcs11js.Attribute[]>('C_GetAttributeValue', session, privateKey, [{ type: pkcs11js.CKA_ID }]);
  const id = idAttribute?.value instanceof Buffer && idAttribute.value.length > 0 ? idAttribute.value : options.id;
  const handle = await findOne(thread, session, pkcs11js.CKO_PUBLIC_KEY, { ...options, ...(id === undefined ? {} : { id }) }, 'public key');
  const [params, point] = await thread.call<pkcs11js.Attribute[]>('C_GetAttributeValue', session, handle, [
    { type: pkcs11js.CKA_EC_PARAMS },
    { type: pkcs11js.CKA_EC_POINT },
  ]);
  if (!isEd25519Curve(params?.value instanceof Buffer ? params.value : Buffer.alloc(0)))
    throw failure('not_ed25519', 'the key is an Edwards key but not on edwards25519 (Ed448?); Solana signs with Ed25519');
  return new PublicKey(ecPointBytes(point?.value instanceof Buffer ? point.value : Buffer.alloc(0)));
}

/** CKA_EC_PARAMS as one DER value: an OID or a string naming the curve (ED25519_OIDS, ED25519_NAMES). */
function isEd25519Curve(params: Buffer): boolean {
  const [tag, length] = params;
  if (tag === undefined || length === undefined || length >= 0x80 || params.length !== 2 + length) return false;
  const body = params.subarray(2);
  if (tag === DER_OID) return ED25519_OIDS.includes(body.toString('hex'));
  return DER_STRINGS.includes(tag) && ED25519_NAMES.includes(body.toString('latin1').toLowerCase());
}

/** CKA_EC_POINT holds the 32 bytes raw (SoftHSM's import) or as a DER OCTET STRING (keys generated in most tokens). */
function ecPointBytes(point: Buffer): Buffer {
  if (point.length === 32) return point;
  if (point.length === 34 && point[0] === 0x04 && point[1] === 0x20) return point.subarray(2);
  throw failure('not_ed25519', `the public key's CKA_EC_POINT is ${point.length} bytes, neither 32 raw bytes nor a DER OCTET STRING of 32`);
}

function selectionText(options: Pkcs11Options, keys: readonly ('token' | 'serial' | 'slotId' | 'object' | 'id')[]): string {
  const names = { token: 'token', serial: 'serial', slotId: 'slot-id', object: 'object', id: 'id' } as const;
  return keys
    .filter((key) => options[key] !== undefined)
    .map((key) => {
      const value = options[key];
      return `${names[key]}=${value instanceof Uint8Array ? Buffer.from(value).toString('hex') : JSON.stringify(value)}`;
    })
    .join(' ');
}

function resultCode(err: unknown): string | undefined {
  return err instanceof Pkcs11CallError && err.message.startsWith('CKR_') ? err.message : undefined;
}

function failure(reason: SignerFailure, message: string, cause?: unknown): BridgeError<'SIGNER__UNAVAILABLE'> {
  return signerFailure('PKCS#11', reason, message, cause);
}
