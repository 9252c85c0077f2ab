import type { KeyServiceKind } from '../authority-signer.js';
import type { BridgeError } from '../../errors.js';
import { configProblem, type ConfigProblem } from '../signer-failure.js';
import { fileSourcePath, parseAttributes, percentDecode } from '../uri-attributes.js';

/**
 * BRIDGE_AUTHORITY_KEYPAIR naming a key in a key service (docs/operating.md, "Keeping the key in a key service", lists the grammar):
 *
 *   aws-kms:<key id | key ARN | alias/<name> | alias ARN>[?region=<region>]
 *   gcp-kms:projects/<p>/locations/<l>/keyRings/<r>/cryptoKeys/<k>/cryptoKeyVersions/<v>[?endpoint=<https URL>]
 *   vault-transit:<mount>/<key>[?token-source=file:<path>]
 *
 * Credentials are never part of a URI: each platform's own chain supplies them (vault-transit's
 * token-source names a file, like PKCS#11's pin-source). Problems never quote the query.
 */

const SCHEMES: Record<string, KeyServiceKind> = { 'aws-kms:': 'aws-kms', 'gcp-kms:': 'gcp-kms', 'vault-transit:': 'vault-transit' };
const QUERY_ATTRIBUTES: Record<KeyServiceKind, readonly string[]> = {
  'aws-kms': ['region'],
  'gcp-kms': ['endpoint'],
  'vault-transit': ['token-source'],
};

const AWS_KEY_ID = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|mrk-[0-9a-f]{32}|alias\/[A-Za-z0-9/_-]{1,250})$/;
const AWS_ARN = /^arn:aws[a-z-]*:kms:([a-z0-9-]+):\d{12}:(key\/[A-Za-z0-9-]+|alias\/[A-Za-z0-9/_-]+)$/;
const AWS_REGION = /^[a-z]{2}(-[a-z]+)+-\d{1,2}$/;
const GCP_VERSION = /^projects\/[^/]+\/locations\/[^/]+\/keyRings\/[^/]+\/cryptoKeys\/[^/]+\/cryptoKeyVersions\/\d+$/;
const VAULT_NAME = /^[A-Za-z0-9_.-]+$/;
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

export type KeyServiceUri =
  | { kind: 'aws-kms'; keyId: string; region?: string }
  | { kind: 'gcp-kms'; name: string; endpoint?: URL }
  | { kind: 'vault-transit'; mount: string; key: string; tokenFile?: string };

export function keyServiceKind(value: string): KeyServiceKind | undefined {
  const lower = value.toLowerCase();
  const scheme = Object.keys(SCHEMES).find((prefix) => lower.startsWith(prefix));
  return scheme === undefined ? undefined : SCHEMES[scheme];
}

export function keyServiceProblem(kind: KeyServiceKind, problem: string): BridgeError<'CONFIG__INVALID'> {
  return configProblem(`${kind} URI: ${problem}`);
}

/** Throws CONFIG__INVALID with one problem line. */
export function parseKeyServiceUri(uri: string, kind: KeyServiceKind): KeyServiceUri {
  const problem = (text: string) => keyServiceProblem(kind, text);
  const rest = uri.slice(kind.length + 1);
  const queryStart = rest.indexOf('?');
  const path = percentDecode(queryStart === -1 ? rest : rest.slice(0, queryStart), 'the key', problem);
  const query = parseAttributes(queryStart === -1 ? '' : rest.slice(queryStart + 1), {
    separator: '&',
    known: QUERY_ATTRIBUTES[kind],
    part: 'query',
    problem,
  });
  const value = (name: string) => {
    const text = query.get(name);
    return text === undefined ? undefined : percentDecode(text, name, problem);
  };
  if (kind === 'aws-kms') return awsKms(path, value('region'), problem);
  if (kind === 'gcp-kms') return gcpKms(path, value('endpoint'), problem);
  return vaultTransit(path, value('token-source'), problem);
}

function awsKms(keyId: string, region: string | undefined, problem: ConfigProblem): KeyServiceUri {
  const arn = AWS_ARN.exec(keyId);
  if (arn === null && !AWS_KEY_ID.test(keyId)) {
    throw problem(`${JSON.stringify(keyId)} is not a KMS key id, key ARN, alias/<name> or alias ARN`);
  }
  if (region !== undefined && !AWS_REGION.test(region)) throw problem(`region ${JSON.stringify(region)} is not an AWS region name (like eu-west-1)`);
  if (arn !== null && region !== undefined && region !== arn[1])
    throw problem(`region=${region} differs from the ARN's region ${arn[1]}; leave region out`);
  const resolved = region ?? arn?.[1];
  return { kind: 'aws-kms', keyId, ...(resolved === undefined ? {} : { region: resolved }) };
}

function gcpKms(name: string, endpoint: string | undefined, problem: ConfigProblem): KeyServiceUri {
  if (!GCP_VERSION.test(name)) {
    throw problem(
      `${JSON.stringify(name)} is not a key version's resource name (projects/<p>/locations/<l>/keyRings/<r>/cryptoKeys/<k>/cryptoKeyVersions/<v>)`,
    );
  }
  if (endpoint === undefined) return { kind: 'gcp-kms', name };
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw problem('endpoint is not a URL (expected https://<host>[:<port>])');
  }
  // Plain HTTP only to this host (a local emulator): elsewhere it would carry the bearer token in clear.
  const plainAllowed = url.protocol === 'http:' && isLoopbackHost(url.hostname);
  if ((url.protocol !== 'https:' && !plainAllowed) || url.pathname !== '/' || url.search !== '' || url.username !== '') {
    throw problem('endpoint must be https://<host>[:<port>] with no path, query or user (http only to a loopback address)');
  }
  return { kind: 'gcp-kms', name, endpoint: url };
}

/** A URL's hostname that names this host's loopback interface: plain HTTP to it never crosses a network. */
export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK_HOSTS.has(hostname) || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

function vaultTransit(path: string, tokenSource: string | undefined, problem: ConfigProblem): KeyServiceUri {
  const slash = path.lastIndexOf('/');
  const mount = path.slice(0, slash);
  const key = path.slice(slash + 1);
  if (slash <= 0 || !mount.split('/').every((part) => VAULT_NAME.test(part)) || !VAULT_NAME.test(key)) {
    throw problem(`${JSON.stringify(path)} is not <mount>/<key> (letters, digits, _ . - between slashes)`);
  }
  if (tokenSource === undefined) return { kind: 'vault-transit', mount, key };
  return { kind: 'vault-transit', mount, key, tokenFile: fileSourcePath(tokenSource, 'token-source', problem) };
}
