/**
 * What signing costs with the authority key out of the process: Ed25519 signatures per second
 * through PKCS#11 (SoftHSM in a temporary directory of its own) and through each key service's
 * client against its local fake (AWS KMS, Google Cloud KMS, Vault transit over loopback HTTP),
 * against the in-process file key, one signature at a time as the crank signs (each awaited),
 * bare and as a whole transaction (build, sign, verify, serialize). Loopback has no network
 * latency: a real HSM or key service adds its round trip.
 */
import { Keypair, PublicKey } from '@solana/web3.js';
import type { AuthoritySigner } from '../src/signer/authority-signer.js';
import { FileKeySigner } from '../src/signer/file-key-signer.js';
import { signTransaction } from '../src/chain/client/submit/build/sign-transaction.js';
import { ackWithdrawInstruction } from '../src/chain/codec/builders.js';
import { DEFAULT_PROGRAM_ID } from '../src/chain/codec/layout.js';
import { depositTrackerAddress } from '../src/chain/pda.js';
import { loadAuthoritySigner } from '../src/signer/open-signer.js';
import { startKeyServiceFake, type KeyServiceName } from '../test/support/key-service-fakes.js';
import { createSoftHsm, TOKEN_PIN } from '../test/support/softhsm.js';
import { percentile, type Bench, type BenchResult, type Row } from './report.js';

const SIGNATURES = 3_000;
// Each key-service signature is an HTTP request through the platform's client: fewer of them.
const SERVICE_SIGNATURES = 500;
const SERVICES: readonly KeyServiceName[] = ['aws-kms', 'gcp-kms', 'vault-transit'];
const WARMUP = 200;
// A full ack_withdraw batch: the size of a transaction the crank signs.
const INSTRUCTIONS = 8;

interface Measured {
  perSecond: number;
  p50Us: number;
  p99Us: number;
}

async function measure(count: number, once: (i: number) => Promise<unknown>, signal: AbortSignal): Promise<Measured> {
  for (let i = 0; i < WARMUP; i++) await once(i);
  const micros: number[] = [];
  const begin = performance.now();
  for (let i = 0; i < count; i++) {
    signal.throwIfAborted();
    const start = performance.now();
    await once(i);
    micros.push((performance.now() - start) * 1000);
  }
  const seconds = (performance.now() - begin) / 1000;
  return { perSecond: count / seconds, p50Us: percentile(micros, 50), p99Us: percentile(micros, 99) };
}

async function rowsFor(kind: string, signer: AuthoritySigner, signal: AbortSignal, count = SIGNATURES): Promise<Row[]> {
  const programId = new PublicKey(DEFAULT_PROGRAM_ID);
  const depositTracker = depositTrackerAddress(programId, 2);
  const blockhash = Keypair.generate().publicKey.toBase58();
  const instructions = Array.from({ length: INSTRUCTIONS }, (_, i) =>
    ackWithdrawInstruction({
      programId,
      authority: signer.publicKey,
      depositTracker,
      index: BigInt(i),
      approve: true,
      result: { tag: 1, reason: 0, amount: 9n },
    }),
  );
  const message = Buffer.alloc(400, 7);
  const bare = await measure(count, (i) => signer.sign(message.fill(i & 0xff, 0, 1)), signal);
  const whole = await measure(count, (i) => signTransaction(signer, instructions, blockhash, i), signal);
  return [
    { signer: kind, what: 'sign a 400-byte message', signatures: count, ...bare },
    { signer: kind, what: `sign a ${INSTRUCTIONS}-vote transaction (build, sign, verify, serialize)`, signatures: count, ...whole },
  ];
}

async function run(signal: AbortSignal): Promise<BenchResult> {
  const authority = Keypair.generate();
  const hsm = createSoftHsm();
  const previousConf = process.env['SOFTHSM2_CONF'];
  process.env['SOFTHSM2_CONF'] = hsm.env.SOFTHSM2_CONF;
  try {
    hsm.initToken('bench');
    hsm.importKeypair('bench', 'authority', '01', authority);
    const { signer: token } = await loadAuthoritySigner(hsm.uri('token=bench;object=authority', `pin-value=${TOKEN_PIN}`));
    const rows = [
      ...(await rowsFor('file key (node:crypto)', new FileKeySigner(authority), signal)),
      ...(await rowsFor('PKCS#11 (SoftHSM 2)', token, signal)),
    ];
    for (const service of SERVICES) rows.push(...(await serviceRows(service, authority, signal)));
    return {
      name: 'signing',
      tables: [
        {
          title: 'Ed25519 signing, one signature at a time per row',
          columns: [
            { key: 'signer', header: 'signer' },
            { key: 'what', header: 'what' },
            { key: 'signatures', header: 'signatures', digits: 0 },
            { key: 'perSecond', header: 'per second', digits: 0 },
            { key: 'p50Us', header: 'p50 µs', digits: 1 },
            { key: 'p99Us', header: 'p99 µs', digits: 1 },
          ],
          rows,
          notes: [
            "PKCS#11: C_SignInit then C_Sign on the module's worker thread (the event loop is free meanwhile); SoftHSM runs in process, a network HSM adds its round trip",
            "key services: each platform's client over loopback HTTP to a local fake signing with node:crypto, and the returned signature verified; a real service adds its network round trip (typically milliseconds within a region)",
            'a transaction row adds building the message, verifying the signature in process and serializing',
          ],
        },
      ],
      parameters: { signatures: SIGNATURES, serviceSignatures: SERVICE_SIGNATURES, warmup: WARMUP, instructions: INSTRUCTIONS },
      failures: [],
      data: rows,
    };
  } finally {
    if (previousConf === undefined) delete process.env['SOFTHSM2_CONF'];
    else process.env['SOFTHSM2_CONF'] = previousConf;
    hsm.remove();
  }
}

/** The platform's standard credential chain points at the fake for the duration of the rows. */
async function serviceRows(service: KeyServiceName, authority: Keypair, signal: AbortSignal): Promise<Row[]> {
  const fake = await startKeyServiceFake(service, authority);
  const saved = { ...process.env };
  Object.assign(process.env, fake.env);
  try {
    const { signer } = await loadAuthoritySigner(fake.uri, process.env);
    return await rowsFor(`${service} (local fake)`, signer, signal, SERVICE_SIGNATURES);
  } finally {
    process.env = saved;
    await fake.close();
  }
}

export const signingBench: Bench = {
  name: 'signing',
  description: 'Ed25519 signatures per second: the key in a PKCS#11 token (SoftHSM) or a key service (local fakes) vs the in-process file key',
  run,
};
