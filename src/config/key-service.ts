import type { AuthoritySigner, KeyServiceKind } from '../chain/authority-signer.js';
import type { KeyService } from '../chain/signers/remote-signer.js';
import { keyServiceProblem, parseKeyServiceUri, type KeyServiceUri } from './key-service-uri.js';
import { readSecretFile } from './secret-file.js';

/**
 * Opens the signer of a key-service URI (key-service-uri.ts): each platform's client is loaded
 * only here, and the pair is proved (the service's public key, one verified signature) before
 * the server listens. A URI or credential problem is CONFIG__INVALID; a service that cannot be
 * used is SIGNER__UNAVAILABLE, which loadAuthoritySigner (keypair.ts) turns into one line naming
 * BRIDGE_AUTHORITY_KEYPAIR.
 */

export async function openKeyServiceSigner(source: string, kind: KeyServiceKind, env: NodeJS.ProcessEnv): Promise<AuthoritySigner> {
  const uri = parseKeyServiceUri(source, kind);
  const service = await keyService(uri, env);
  const { openRemoteSigner } = await import('../chain/signers/remote-signer.js');
  return openRemoteSigner(service);
}

async function keyService(uri: KeyServiceUri, env: NodeJS.ProcessEnv): Promise<KeyService> {
  if (uri.kind === 'aws-kms') {
    const { awsKmsService } = await import('../chain/signers/aws-kms.js');
    return awsKmsService(uri);
  }
  if (uri.kind === 'gcp-kms') {
    const { gcpKmsService } = await import('../chain/signers/gcp-kms.js');
    return gcpKmsService(uri);
  }
  const { vaultTransitService } = await import('../chain/signers/vault-transit.js');
  return vaultTransitService({ ...vaultAccess(uri, env), mount: uri.mount, key: uri.key });
}

/** Vault's own variables: VAULT_ADDR, VAULT_TOKEN (or the URI's token-source file), VAULT_NAMESPACE. */
function vaultAccess(uri: Extract<KeyServiceUri, { kind: 'vault-transit' }>, env: NodeJS.ProcessEnv): { address: string; token: string; namespace?: string } {
  const problem = (text: string) => keyServiceProblem('vault-transit', text);
  const address = env['VAULT_ADDR'];
  if (address === undefined || address === '') throw problem('VAULT_ADDR is not set; set it to the Vault server (https://vault.example:8200)');
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    throw problem('VAULT_ADDR is not a URL');
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.search !== '' || url.username !== '' || url.password !== '') {
    throw problem('VAULT_ADDR must be http(s)://<host>[:<port>] with no query or user');
  }
  const token = uri.tokenFile === undefined ? env['VAULT_TOKEN'] : readSecretFile(uri.tokenFile, 'token-source', problem);
  if (token === undefined || token === '') throw problem('no Vault token: set VAULT_TOKEN or add ?token-source=file:<a mounted file holding the token>');
  const namespace = env['VAULT_NAMESPACE'];
  return { address: `${url.origin}${url.pathname.replace(/\/+$/, '')}`, token, ...(namespace === undefined || namespace === '' ? {} : { namespace }) };
}
