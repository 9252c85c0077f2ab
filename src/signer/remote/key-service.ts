import type { AuthoritySigner, KeyServiceKind } from '../authority-signer.js';
import type { KeyService } from './remote-signer.js';
import { parseKeyServiceUri, type KeyServiceUri } from './key-service-uri.js';
import { vaultAccess } from './key-service-vault.js';

/**
 * Opens the signer of a key-service URI (key-service-uri.ts): each platform's client is loaded
 * only here, and the pair is proved (the service's public key, one verified signature) before
 * the server listens. A URI or credential problem is CONFIG__INVALID; a service that cannot be
 * used is SIGNER__UNAVAILABLE, which loadAuthoritySigner (../open-signer.ts) turns into one line naming
 * BRIDGE_AUTHORITY_KEYPAIR.
 */

export async function openKeyServiceSigner(source: string, kind: KeyServiceKind, env: NodeJS.ProcessEnv): Promise<AuthoritySigner> {
  const uri = parseKeyServiceUri(source, kind);
  const service = await keyService(uri, env);
  const { openRemoteSigner } = await import('./remote-signer.js');
  return openRemoteSigner(service);
}

async function keyService(uri: KeyServiceUri, env: NodeJS.ProcessEnv): Promise<KeyService> {
  if (uri.kind === 'aws-kms') {
    const { awsKmsService } = await import('./aws-kms.js');
    return awsKmsService(uri);
  }
  if (uri.kind === 'gcp-kms') {
    const { gcpKmsService } = await import('./gcp-kms.js');
    return gcpKmsService(uri);
  }
  const { vaultTransitService } = await import('./vault-transit.js');
  return vaultTransitService({ ...vaultAccess(uri, env), mount: uri.mount, key: uri.key });
}
