import type { World } from './world/bootstrap.js';

/** The environment a bridge server (`node dist/index.js`) needs to run as authority `k` of a devnet world. */
export function serverEnv(world: World, k: number, bindPort: number): Record<string, string> {
  const authority = world.authorities[k];
  if (authority === undefined) throw new RangeError(`authority ${k} does not exist: the world has ${world.authorities.length}`);
  return {
    BRIDGE_SOURCE_RPC_URL: world.source.rpcUrl,
    BRIDGE_TARGET_RPC_URL: world.target.rpcUrl,
    BRIDGE_SOURCE_CHAIN_ID: String(world.source.chainId),
    BRIDGE_TARGET_CHAIN_ID: String(world.target.chainId),
    BRIDGE_AUTHORITY_KEYPAIR: authority.keypairPath,
    BRIDGE_BIND_ADDRESS: `127.0.0.1:${bindPort}`,
    BRIDGE_POLL_INTERVAL_SECS: '2',
    // One server per authority by construction: no handoff, each signs from its first cycle
    // instead of standing by for the quiet window (docs/operating.md, "Rolling deploys and hot standby").
    BRIDGE_HANDOFF_SECS: '0',
  };
}

/** Printed above the lines: two copies of one line would be two servers of one authority, both signing from the start. */
export const ONE_SERVER_PER_AUTHORITY =
  'BRIDGE_HANDOFF_SECS=0 is for one server per authority: each signs from its first cycle. To rehearse a rollout (two servers of one authority), ' +
  'leave it out of the second so that it stands by (docs/operating.md, "Rolling deploys and hot standby")';
