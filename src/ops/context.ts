import { PublicKey } from '@solana/web3.js';
import { Registry } from 'prom-client';
import { createOperatorReads, endpointsOptions, type OperatorReads } from '../chain/client/index.js';
import { parseConfig, RUNTIME_VARIABLES, type CrankConfig } from '../config/config.js';
import { loadAuthorityKeypair } from '../config/keypair.js';
import { BridgeError } from '../errors.js';
import { createMetrics } from '../metrics/metrics.js';

/**
 * What every `ops` command needs, from the server's own variables: the chain reads and this
 * authority's PUBLIC key. The keypair file is read only to take its public key; the secret
 * goes out of scope at once and is never printed.
 */

export interface OpsContext {
  crank: CrankConfig;
  authority: PublicKey;
  reads: OperatorReads;
}

export function loadOpsContext(env: NodeJS.ProcessEnv): OpsContext {
  const { config } = parseConfig(env);
  if (config.crank === undefined) {
    const line = `${RUNTIME_VARIABLES.join(', ')}: not set; npm run ops reads the same variables as the server (set them as for the server)`;
    throw new BridgeError('CONFIG__INVALID', { problems: [line] }, line);
  }
  const authority = new PublicKey(loadAuthorityKeypair(config.crank.authorityKeypairPath).keypair.publicKey.toBytes());
  const reads = createOperatorReads(endpointsOptions(config.crank, createMetrics(new Registry())));
  return { crank: config.crank, authority, reads };
}
