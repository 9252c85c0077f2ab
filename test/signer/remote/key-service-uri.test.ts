import { describe, expect, it } from 'vitest';
import { keyServiceKind, parseKeyServiceUri } from '../../../src/signer/remote/key-service-uri.js';
import { isBridgeError } from '../../../src/errors.js';

const SECRET = 'SECRET-9e1f-DO-NOT-LEAK';
const GCP = 'projects/p/locations/europe-west1/keyRings/r/cryptoKeys/k/cryptoKeyVersions/3';

function problemOf(uri: string): string {
  const kind = keyServiceKind(uri);
  if (kind === undefined) throw new Error(`${uri} is not a key-service URI`);
  try {
    parseKeyServiceUri(uri, kind);
  } catch (err) {
    if (isBridgeError(err, 'CONFIG__INVALID') && err.context.problems.length === 1) return err.context.problems[0]!;
    throw err;
  }
  throw new Error(`expected ${uri} to be refused`);
}

describe('key-service URIs in BRIDGE_AUTHORITY_KEYPAIR', () => {
  it.each([
    ['aws-kms:1234abcd-12ab-34cd-56ef-1234567890ab', { kind: 'aws-kms', keyId: '1234abcd-12ab-34cd-56ef-1234567890ab' }],
    ['aws-kms:alias/bridge-authority?region=eu-west-1', { kind: 'aws-kms', keyId: 'alias/bridge-authority', region: 'eu-west-1' }],
    [
      'aws-kms:arn:aws:kms:us-east-2:111122223333:key/mrk-1234abcd12ab34cd56ef1234567890ab',
      { kind: 'aws-kms', keyId: 'arn:aws:kms:us-east-2:111122223333:key/mrk-1234abcd12ab34cd56ef1234567890ab', region: 'us-east-2' },
    ],
    [`gcp-kms:${GCP}`, { kind: 'gcp-kms', name: GCP }],
    ['vault-transit:transit/bridge-authority', { kind: 'vault-transit', mount: 'transit', key: 'bridge-authority' }],
    [
      'vault-transit:ops/transit/authority?token-source=file:/run/secrets/vault-token',
      { kind: 'vault-transit', mount: 'ops/transit', key: 'authority', tokenFile: '/run/secrets/vault-token' },
    ],
  ])('reads %s', (uri, expected) => {
    expect(parseKeyServiceUri(uri, keyServiceKind(uri)!)).toEqual(expected);
  });

  it('takes a loopback http endpoint or any https one for Cloud KMS', () => {
    expect(parseKeyServiceUri(`gcp-kms:${GCP}?endpoint=https%3A%2F%2Fcloudkms-psc.p.googleapis.com`, 'gcp-kms')).toMatchObject({
      endpoint: new URL('https://cloudkms-psc.p.googleapis.com'),
    });
    expect(problemOf(`gcp-kms:${GCP}?endpoint=http://kms.example.com`)).toContain('http only to a loopback address');
  });

  it.each([
    ['aws-kms:my-key', 'is not a KMS key id, key ARN, alias/<name> or alias ARN'],
    ['aws-kms:alias/a?region=mars', 'region "mars" is not an AWS region name'],
    ['aws-kms:arn:aws:kms:us-east-2:111122223333:key/abc?region=eu-west-1', "differs from the ARN's region us-east-2"],
    ['aws-kms:alias/a?region=eu-west-1&region=eu-west-2', 'region is given twice'],
    ['gcp-kms:projects/p/locations/l/keyRings/r/cryptoKeys/k', "is not a key version's resource name"],
    ['vault-transit:bridge-authority', 'is not <mount>/<key>'],
    ['vault-transit:transit/a?token-source=token.txt', 'token-source must be a file'],
  ])('refuses %s', (uri, problem) => {
    const line = problemOf(uri);
    expect(line.startsWith(`BRIDGE_AUTHORITY_KEYPAIR: ${keyServiceKind(uri)} URI: `)).toBe(true);
    expect(line).toContain(problem);
  });

  it('refuses an unknown query attribute without quoting it', () => {
    for (const uri of [
      `aws-kms:alias/a?secret=${SECRET}`,
      `vault-transit:transit/a?token=${SECRET}`,
      `gcp-kms:${GCP}?endpoint=https://x.example&${SECRET}`,
    ]) {
      const line = problemOf(uri);
      expect(line).toContain('an attribute of the query (not quoted');
      expect(line).not.toContain(SECRET);
    }
  });
});
