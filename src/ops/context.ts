import type { PublicKey } from '@solana/web3.js';
import { Registry } from 'prom-client';
import type { AuthoritySigner, SignerDescription } from '../signer/authority-signer.js';
import { endpointsOptions } from '../chain/client/chain-endpoints.js';
import { createOperatorReads, type OperatorReads } from '../chain/client/operator-chains.js';
import { parseConfig, type CrankConfig } from '../config/config.js';
import { RUNTIME_VARIABLES } from '../config/variable-sets.js';
import { loadAuthoritySigner } from '../signer/open-signer.js';
import { BridgeError } from '../errors.js';
import { createMetrics } from '../metrics/metrics.js';

/**
 * What every `ops` command needs, from the server's own variables: the chain reads, this
 * authority's PUBLIC key and which kind of signer holds it. The signer is opened as the server
 * opens it (a keypair file, or a PKCS#11 token it logs in to); only `nonce init` signs with it;
 * the secret and the PIN are never printed.
 */

export interface OpsContext {
  crank: CrankConfig;
  authority: PublicKey;
  signer: SignerDescription;
  /** The key itself, for the one command that signs (`nonce init`); never printed. */
  key: AuthoritySigner;
  reads: OperatorReads;
}

export type OpsSigner = Pick<OpsContext, 'authority' | 'signer' | 'key'>;

export async function loadOpsContext(env: NodeJS.ProcessEnv): Promise<OpsContext> {
  const { config } = parseConfig(env);
  if (config.crank === undefined) {
    const line = `${RUNTIME_VARIABLES.join(', ')}: not set; npm run ops reads the same variables as the server (set them as for the server)`;
    throw new BridgeError('CONFIG__INVALID', { problems: [line] });
  }
  const reads = createOperatorReads(endpointsOptions(config.crank, createMetrics(new Registry())));
  return { crank: config.crank, ...(await loadOpsSigner(env)), reads };
}

/** Only the signer, from BRIDGE_AUTHORITY_KEYPAIR alone: `ops signer` runs before the chains are configured. */
export async function loadOpsSigner(env: NodeJS.ProcessEnv): Promise<OpsSigner> {
  const source = env['BRIDGE_AUTHORITY_KEYPAIR'];
  if (source === undefined || source === '') {
    const line = 'BRIDGE_AUTHORITY_KEYPAIR: not set; name the keypair file, PKCS#11 URI or key-service URI the server will sign with';
    throw new BridgeError('CONFIG__INVALID', { problems: [line] });
  }
  const { signer } = await loadAuthoritySigner(source, env);
  return { authority: signer.publicKey, signer: signer.describe(), key: signer };
}
