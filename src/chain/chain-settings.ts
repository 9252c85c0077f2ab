/**
 * What the chain layer defines that the configuration parses (src/config/): the nonce pool's
 * limit and one chain's send extensions. A leaf with no imports: a server without runtime
 * configuration parses these and never loads the Solana stack.
 */

/** Most durable-nonce accounts per chain (BRIDGE_NONCE_ACCOUNTS): more lanes than the chain's crank actions buy nothing (docs/chain-client.md). */
export const MAX_NONCE_ACCOUNTS = 8;

/** A transfer of `lamports` to one of `accounts` (chosen per transaction) inside every transaction of a chain. */
export interface Tip {
  accounts: string[];
  lamports: number;
}

/** One chain's send extensions (docs/configuration.md, "Extensions"): where its transactions go besides the read endpoints, and what they pay to get there. */
export interface SendExtensions {
  /** BRIDGE_*_SEND_URLS: endpoints that receive every signed transaction and are never read. */
  sendUrls: string[];
  /** BRIDGE_*_TIP_LAMPORTS to one of BRIDGE_*_TIP_ACCOUNT; undefined without a tip. */
  tip: Tip | undefined;
  /** BRIDGE_*_FEE_ESTIMATE_URL: a getPriorityFeeEstimate endpoint beside the fee history; undefined without one. */
  feeEstimateUrl?: string;
}
