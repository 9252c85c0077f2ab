import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { Keypair } from '@solana/web3.js';
import { loopbackCertificate, startKeyServiceFake, type Fault, type KeyServiceFake, type KeyServiceName } from '../test/support/key-service-fakes.js';

/**
 * `npm run rehearse:key-services`: the local stand-ins for AWS KMS, Google Cloud KMS and Vault
 * transit that the tests use (test/support/key-service-fakes.ts), on 127.0.0.1, signing as the
 * keypair file given with --keypair (or a new key), for rehearsing docs/key-custody.md without a
 * cloud account. Prints, per service, the variables that point a server (or `npm run ops --
 * signer`) at it; `--tls` serves Vault over https with a certificate of its own (VAULT_CACERT).
 * A line `<service> <fault>` on stdin switches a failure on (`none` clears it); Ctrl-C stops.
 */

const SERVICES: KeyServiceName[] = ['aws-kms', 'gcp-kms', 'vault-transit'];
const FAULTS: Fault[] = ['none', 'denied', 'hang', 'unavailable', 'wrong_key', 'not_ed25519', 'disabled', 'garbled'];

function keypairOf(path: string | undefined): Keypair {
  if (path === undefined) return Keypair.generate();
  return Keypair.fromSecretKey(Uint8Array.from(JSON.parse(readFileSync(path, 'utf8')) as number[]));
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { keypair: { type: 'string' }, tls: { type: 'boolean', default: false } } });
  const keypair = keypairOf(values.keypair);
  const tls = values.tls ? loopbackCertificate() : undefined;
  const fakes = new Map<KeyServiceName, KeyServiceFake>();
  for (const service of SERVICES) {
    fakes.set(service, await startKeyServiceFake(service, keypair, service === 'vault-transit' && tls !== undefined ? { tls } : {}));
  }
  const lines = [`# The three fakes sign as ${keypair.publicKey.toBase58()}. Paste one block into the server's shell.`];
  for (const [service, fake] of fakes) {
    const env = {
      ...fake.env,
      ...(service === 'vault-transit' && tls !== undefined ? { VAULT_CACERT: tls.certPath } : {}),
      BRIDGE_AUTHORITY_KEYPAIR: fake.uri,
    };
    lines.push('', `# ${service} at ${fake.url}`, ...Object.entries(env).map(([name, value]) => `export ${name}='${value}'`));
  }
  lines.push('', `# Type "<service> <fault>" to make one fail (${FAULTS.join(', ')}); Ctrl-C stops.`);
  process.stdout.write(`${lines.join('\n')}\n`);

  const stop = async () => {
    for (const fake of fakes.values()) await fake.close();
    tls?.remove();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
  createInterface({ input: process.stdin }).on('line', (line) => {
    const [service, fault] = line.trim().split(/\s+/);
    const fake = fakes.get(service as KeyServiceName);
    if (fake === undefined || !FAULTS.includes(fault as Fault)) {
      process.stdout.write(`expected "<${SERVICES.join('|')}> <${FAULTS.join('|')}>"\n`);
      return;
    }
    fake.fault = fault as Fault;
    process.stdout.write(`${service}: ${fault}\n`);
  });
}

main().catch((err: unknown) => {
  // A bad --keypair or a missing openssl: one line, no stack trace.
  process.stderr.write(`rehearse:key-services: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}\n`);
  process.exit(1);
});
