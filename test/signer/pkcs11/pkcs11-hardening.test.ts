import { randomBytes } from 'node:crypto';
import { Keypair } from '@solana/web3.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openPkcs11Signer, type Pkcs11Signer } from '../../../src/signer/pkcs11/pkcs11-signer.js';
import { ed25519PublicKeyObject, verifiesEd25519 } from '../../../src/signer/ed25519.js';
import { loadAuthoritySigner } from '../../../src/signer/open-signer.js';
import { isBridgeError } from '../../../src/errors.js';
import { retriesAction } from '../../../src/failure-policy.js';
import { buildHangingModule, type HangingModule } from '../../support/hanging-module.js';
import { rejection } from '../../support/rejection.js';
import { createSoftHsm, finalizeModule, rewriteCurveParams, TOKEN_PIN, type SoftHsm } from '../../support/softhsm.js';

/**
 * Issue 32 item 2, against SoftHSM: a C_Sign that hangs (hanging-pkcs11.c) becomes a retryable
 * SIGNER__UNAVAILABLE within the bound while the event loop keeps running; a module finalized
 * under the signer (a device reset) is initialized again; the curve named as real tokens name it.
 */

const BOUND_MS = 400;
const authority = Keypair.fromSeed(new Uint8Array(32).fill(41));
let hsm: SoftHsm;
let hanging: HangingModule;
const signers: Pkcs11Signer[] = [];

beforeAll(() => {
  hsm = createSoftHsm();
  process.env['SOFTHSM2_CONF'] = hsm.env.SOFTHSM2_CONF;
  hsm.initToken('bridge');
  hsm.importKeypair('bridge', 'authority', '01', authority);
  hsm.importKeypair('bridge', 'luna', '02', Keypair.generate());
  hsm.importKeypair('bridge', 'gnupg', '03', Keypair.generate());
  hsm.importKeypair('bridge', 'ed448', '04', Keypair.generate());
  hanging = buildHangingModule(hsm.modulePath, hsm.dir);
}, 60_000);

afterEach(async () => {
  hanging.release();
  for (const signer of signers.splice(0)) await signer.close();
});

afterAll(() => {
  hsm.remove();
});

async function open(modulePath: string, object = 'authority'): Promise<Pkcs11Signer> {
  const signer = await openPkcs11Signer({ modulePath, token: 'bridge', object, pin: TOKEN_PIN }, BOUND_MS);
  signers.push(signer);
  return signer;
}

/** Event-loop turns of a 10 ms interval while `promise` runs: a blocked loop counts none. */
async function ticksDuring<T>(promise: Promise<T>): Promise<{ ticks: number; result: Promise<T> }> {
  let ticks = 0;
  const interval = setInterval(() => ticks++, 10);
  const settled = promise.then(
    () => undefined,
    () => undefined,
  );
  await settled;
  clearInterval(interval);
  return { ticks, result: promise };
}

describe('a C_Sign that hangs (a network HSM that stops answering)', () => {
  it('fails the signature as the retryable SIGNER__UNAVAILABLE within the bound, without blocking the event loop; the next one, once the HSM answers, re-opens and signs', async () => {
    const signer = await open(hanging.path);
    hanging.hang();
    const began = performance.now();
    const { ticks, result } = await ticksDuring(signer.sign(randomBytes(32)));
    const tookMs = performance.now() - began;
    const err = (await rejection(result)) as Error;
    expect(isBridgeError(err, 'SIGNER__UNAVAILABLE') && err.context.reason).toBe('session_lost');
    expect(err.message).toBe(`PKCS#11: the module did not answer within ${BOUND_MS} ms; the next signature loads it on a new thread`);
    expect(retriesAction(err)).toBe(true);
    expect(tookMs).toBeGreaterThanOrEqual(BOUND_MS - 5);
    expect(tookMs).toBeLessThan(BOUND_MS + 2_000);
    expect(ticks).toBeGreaterThanOrEqual(BOUND_MS / 10 / 2);
    expect(signer.describe()).toEqual({ kind: 'pkcs11', token: 'bridge', session: 'lost' });

    hanging.release();
    const message = randomBytes(64);
    const signature = await signer.sign(message);
    expect(verifiesEd25519(ed25519PublicKeyObject(authority.publicKey), message, signature)).toBe(true);
    expect(signer.describe()).toEqual({ kind: 'pkcs11', token: 'bridge', session: 'open' });
  });

  it('leaves at most two hung threads behind: past that a signature fails at once, until one returns', async () => {
    const signer = await open(hanging.path);
    hanging.hang();
    await rejection(signer.sign(randomBytes(32)));
    await rejection(signer.sign(randomBytes(32)));
    const began = performance.now();
    const third = (await rejection(signer.sign(randomBytes(32)))) as Error;
    expect(performance.now() - began).toBeLessThan(BOUND_MS);
    expect(isBridgeError(third, 'SIGNER__UNAVAILABLE') && third.context.reason).toBe('session_lost');
    expect(third.message).toContain(`2 calls into the module have hung past ${BOUND_MS} ms and not returned`);
    hanging.release();
    await expect
      .poll(
        async () =>
          await signer.sign(randomBytes(32)).then(
            () => 'signed',
            (e: Error) => e.message,
          ),
        { timeout: 5_000, interval: 100 },
      )
      .toBe('signed');
  });
});

describe('a module that needs C_Initialize again (its device reset)', () => {
  it('fails one signature as retryable; the next finalizes, initializes, logs in and signs', async () => {
    const signer = await open(hsm.modulePath);
    finalizeModule(hsm.modulePath);
    const err = (await rejection(signer.sign(randomBytes(32)))) as Error;
    expect(isBridgeError(err, 'SIGNER__UNAVAILABLE') && err.context.reason).toBe('session_lost');
    expect(err.message).toContain('CKR_CRYPTOKI_NOT_INITIALIZED');
    const message = randomBytes(64);
    expect(verifiesEd25519(ed25519PublicKeyObject(authority.publicKey), message, await signer.sign(message))).toBe(true);
  });
});

describe('the curve as tokens name it in CKA_EC_PARAMS', () => {
  const printable = (name: string) => Buffer.concat([Buffer.from([0x13, name.length]), Buffer.from(name, 'latin1')]);
  it.each([
    ['luna', 'the PrintableString "Ed25519" (Thales Luna)', printable('Ed25519')],
    ['gnupg', "GnuPG's OID 1.3.6.1.4.1.11591.15.1", Buffer.from('06092b06010401da470f01', 'hex')],
  ])('accepts %s: %s', async (label, _, params) => {
    rewriteCurveParams(hsm.modulePath, 'bridge', label, params);
    const { signer } = await loadAuthoritySigner(hsm.uri(`token=bridge;object=${label}`, `pin-value=${TOKEN_PIN}`));
    signers.push(signer as Pkcs11Signer);
    expect(await signer.sign(randomBytes(32))).toHaveLength(64);
  });

  it("refuses Ed448's OID 1.3.101.113 as not Ed25519", async () => {
    rewriteCurveParams(hsm.modulePath, 'bridge', 'ed448', Buffer.from('06032b6571', 'hex'));
    const err = (await rejection(loadAuthoritySigner(hsm.uri('token=bridge;object=ed448', `pin-value=${TOKEN_PIN}`)))) as Error;
    expect(err.message).toContain('the key is an Edwards key but not on edwards25519');
  });
});
