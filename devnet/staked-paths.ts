import type { ChainPair } from './chain-pair.js';

/**
 * Congested sending on both chains (docs/devnet.md, "Congestion: forwarding and a staked path"):
 * each chain's port forwards only `percent` % of what it accepts to the leader, and a second
 * port per chain, "staked", forwards all of it. Answers the server environment that sends
 * through the staked ports.
 */
export async function congestSending(
  pair: ChainPair,
  percent: number,
): Promise<{ BRIDGE_SOURCE_SEND_URLS: string; BRIDGE_TARGET_SEND_URLS: string }> {
  const source = await pair.source.addEndpoint();
  const target = await pair.target.addEndpoint();
  for (const node of [pair.source, pair.target]) node.faults.set({ forwardShare: percent / 100 });
  return { BRIDGE_SOURCE_SEND_URLS: source.url, BRIDGE_TARGET_SEND_URLS: target.url };
}
