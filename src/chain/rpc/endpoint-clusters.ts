import type { Logger } from '../../log/logger.js';
import type { Metrics } from '../../metrics/metrics.js';
import { chainName, chainVariables, type ChainSide } from '../../domain.js';
import { chainGenesis, foreignEndpoints, type EndpointKnowledge } from './endpoint-choice.js';
import type { Endpoint } from './endpoint.js';

/**
 * Which cluster each endpoint of a chain serves: one getGenesisHash per endpoint, compared
 * (./endpoint-choice.ts `foreignEndpoints`); a node of another cluster serves nothing and is a
 * configuration problem for /health, naming the variable that lists it.
 */

/** A genesis hash: 32 bytes in base58. Anything else is no answer. */
const GENESIS_HASH = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;

/**
 * An endpoint's cluster identity: the genesis hash it answered (kept until a new answer), and
 * whether it is to be asked (`due`: never answered, or back from an outage), being asked, or known.
 */
interface ClusterKnowledge {
  genesis: string | undefined;
  ask: 'due' | 'asking' | 'known';
}

export interface EndpointClustersOptions {
  chain: ChainSide;
  metrics: Metrics;
  logger?: Logger;
  endpoints: readonly Endpoint[];
  /** The pool's knowledge of each endpoint, whose `foreign` this decides. */
  knowledge: readonly EndpointKnowledge[];
  /** Republishes the pool's gauges after a decision. */
  publish: () => void;
}

export class EndpointClusters {
  private readonly clusters: ClusterKnowledge[];

  constructor(private readonly options: EndpointClustersOptions) {
    this.clusters = options.endpoints.map(() => ({ genesis: undefined, ask: 'due' }));
  }

  /**
   * One getGenesisHash for each of `endpoints` whose cluster is due (each bounded by
   * BRIDGE_RPC_TIMEOUT_MS, as every request): at the first probe, and again once it is back
   * from an outage. One that fails stays due and is asked at a later probe.
   */
  askDue(endpoints: readonly Endpoint[]): void {
    for (const endpoint of endpoints) {
      const cluster = this.clusters[endpoint.index]!;
      if (cluster.ask !== 'due') continue;
      cluster.ask = 'asking';
      endpoint.connection
        .getGenesisHash()
        .then((hash) => {
          if (!GENESIS_HASH.test(hash)) throw new Error('not a genesis hash');
          cluster.ask = 'known';
          cluster.genesis = hash;
          this.decide();
          if (this.options.knowledge[endpoint.index]!.foreign)
            this.options.metrics.rpcEndpointClusterMismatches.inc({ chain: this.options.chain, endpoint: endpoint.label });
        })
        .catch(() => {
          cluster.ask = 'due';
        });
    }
  }

  /** The endpoint is back (from an outage, or its breaker closed): the node behind the URL may be another one. */
  due(index: number): void {
    const cluster = this.clusters[index]!;
    if (cluster.ask === 'known') cluster.ask = 'due';
  }

  /** What an operator must fix in this chain's endpoints right now: the nodes of another cluster, for /health. */
  problems(): string[] {
    return this.options.knowledge.filter((known) => known.foreign).map((known) => this.foreignProblem(known.index));
  }

  /** Compares the genesis hashes known: a node of another cluster serves nothing. */
  private decide(): void {
    const { chain, logger, knowledge, endpoints } = this.options;
    const foreign = foreignEndpoints(this.clusters.map(({ genesis }) => genesis));
    for (const known of knowledge) {
      const endpoint = endpoints[known.index]!;
      if (foreign[known.index] === known.foreign) continue;
      known.foreign = foreign[known.index]!;
      if (known.foreign) logger?.error({ chain, endpoint: endpoint.label }, this.foreignProblem(known.index));
      else
        logger?.info(
          { chain, endpoint: endpoint.label },
          `RPC endpoint ${endpoint.label} of the ${chainName(chain)} chain answers the chain's genesis hash again: it serves again`,
        );
    }
    this.options.publish();
  }

  /**
   * What is wrong with a node of another cluster, naming the variable that lists it and its origin
   * (never its URL). Only a fallback can be one: the primary's answer, when there is one, is the chain's.
   */
  private foreignProblem(index: number): string {
    const { chain } = this.options;
    const { fallbackUrls: variable, rpcUrl } = chainVariables(chain);
    const genesis = this.clusters.map((cluster) => cluster.genesis);
    const whose = genesis[0] === undefined ? "the one most of the chain's endpoints answer" : `${rpcUrl}'s`;
    return (
      `RPC endpoint ${this.options.endpoints[index]!.label} in ${variable} is a node of another cluster: its genesis hash ${genesis[index]} is not ${whose} ` +
      `(${chainGenesis(genesis)}); it serves no reads or sends of the ${chainName(chain)} chain. ` +
      `A configuration error, not transient: remove it from ${variable} or point it at a node of that chain`
    );
  }
}
