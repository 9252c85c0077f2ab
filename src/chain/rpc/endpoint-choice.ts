/**
 * Which endpoint of a chain serves the next read: pure functions over what the pool knows of
 * each endpoint (circuit state, latest slot and when it last advanced). The pool
 * (./endpoint-pool.ts) feeds them and applies their answer.
 */

export interface EndpointKnowledge {
  /** 0 is the primary (BRIDGE_*_RPC_URL), then the fallbacks in their configured order. */
  index: number;
  /**
   * Taken out: the circuit breaker opened (consecutive transient failures), or the endpoint
   * refused us (HTTP 401, 403, 404) within the pool's refusal hold.
   */
  open: boolean;
  /** The latest request to it (a read, a send or a slot probe) got no answer: timeout, lost connection, HTTP 5xx. */
  silent: boolean;
  /** A node of another cluster (its genesis hash is not the chain's, see `foreignEndpoints`): it serves nothing. */
  foreign: boolean;
  /** It asked for no calls before this time (Retry-After; ms, same clock as `now`); undefined when it did not. */
  notBefore: number | undefined;
  /** Its latest accepted slot (a getSlot probe, a context slot; ./slot-marks.ts); undefined until one answered. */
  slot: number | undefined;
  /** Its latest accepted slot is beyond what the chain can have made (a first claim nobody corroborated): it serves nothing and sets no best slot. */
  ahead: boolean;
  /** When `slot` last advanced (ms, same clock as `now`). */
  advancedAt: number | undefined;
}

export interface ChoiceSettings {
  /** BRIDGE_RPC_MAX_SLOT_LAG. */
  maxSlotLag: number;
  /** An endpoint whose slot has not advanced for this long, while another's has, is frozen. */
  frozenAfterMs: number;
}

export type Demotion = 'lagging' | 'stalled' | 'silent' | 'ahead';

/** Why an endpoint is demoted, or undefined when it is fit to serve. */
export function demotionOf(
  endpoint: EndpointKnowledge,
  all: readonly EndpointKnowledge[],
  now: number,
  settings: ChoiceSettings,
): Demotion | undefined {
  // Up means "answered recently": an endpoint whose last request went unanswered is not fit.
  if (endpoint.silent) return 'silent';
  if (endpoint.ahead) return 'ahead';
  // A foreign cluster's slots say nothing of this chain's, nor does a claim beyond what the chain can have made:
  // they neither set the best slot nor keep the chain "advancing".
  const inService = all.filter((other) => !other.open && !other.foreign && !other.ahead);
  const bestSlot = Math.max(...inService.map((other) => other.slot ?? -Infinity));
  if (endpoint.slot !== undefined && bestSlot - endpoint.slot > settings.maxSlotLag) return 'lagging';
  const frozen = (other: EndpointKnowledge) => other.advancedAt === undefined || now - other.advancedAt > settings.frozenAfterMs;
  // A whole chain that stops (a halt, a paused devnet) demotes nobody: there is no better view.
  if (endpoint.advancedAt !== undefined && frozen(endpoint) && inService.some((other) => !frozen(other))) return 'stalled';
  return undefined;
}

/**
 * The order in which a read tries the endpoints: those in service and not demoted first
 * (primary preferred, then configuration order), then those that asked us to wait
 * (Retry-After), then the demoted ones, then those taken out (the breaker answers for them
 * until its half-open probe). A node of another cluster is never tried.
 */
export function readOrder(all: readonly EndpointKnowledge[], now: number, settings: ChoiceSettings): number[] {
  const rank = (endpoint: EndpointKnowledge) => {
    if (endpoint.open) return 3;
    if (demotionOf(endpoint, all, now, settings) !== undefined) return 2;
    return isWaiting(endpoint, now) ? 1 : 0;
  };
  return all
    .filter((endpoint) => !endpoint.foreign)
    .sort((a, b) => rank(a) - rank(b) || a.index - b.index)
    .map((endpoint) => endpoint.index);
}

/**
 * Endpoints a signed transaction is sent to: every one in service that did not ask us to wait;
 * else every one in service; else all but the nodes of another cluster.
 */
export function sendTargets(all: readonly EndpointKnowledge[], now: number, settings: ChoiceSettings): number[] {
  const order = readOrder(all, now, settings);
  const healthy = order.filter((index) => {
    const endpoint = all[index]!;
    return !endpoint.open && demotionOf(endpoint, all, now, settings) === undefined;
  });
  const ready = healthy.filter((index) => !isWaiting(all[index]!, now));
  if (ready.length > 0) return ready;
  return healthy.length > 0 ? healthy : order;
}

/** The endpoint asked for no calls until a time still ahead (Retry-After). */
export function isWaiting(endpoint: Pick<EndpointKnowledge, 'notBefore'>, now: number): boolean {
  return endpoint.notBefore !== undefined && endpoint.notBefore > now;
}

/** Whether the slot probe is due: at most once per `intervalMs` per pool. */
export function probeDue(lastProbeAt: number | undefined, now: number, intervalMs: number): boolean {
  return lastProbeAt === undefined || now - lastProbeAt >= intervalMs;
}

/** Metric label of each endpoint: its origin, with `#k` (1-based) when two share one. */
export function endpointLabels(urls: readonly string[]): string[] {
  const origins = urls.map((url) => new URL(url).origin);
  return origins.map((origin, index) => (origins.filter((other) => other === origin).length > 1 ? `${origin}#${index + 1}` : origin));
}

/**
 * The genesis hash of the chain, from the hash each endpoint answered (undefined: not known yet):
 * the primary's, or, while the primary's is not known, the one a strict majority of the answers
 * share; undefined while undecided.
 */
export function chainGenesis(genesis: readonly (string | undefined)[]): string | undefined {
  if (genesis[0] !== undefined) return genesis[0];
  const answered = genesis.filter((hash): hash is string => hash !== undefined);
  return answered.find((hash) => 2 * answered.filter((other) => other === hash).length > answered.length);
}

/** Which endpoints are nodes of another cluster: those that answered a genesis hash other than the chain's. None while undecided. */
export function foreignEndpoints(genesis: readonly (string | undefined)[]): boolean[] {
  const reference = chainGenesis(genesis);
  return genesis.map((hash) => reference !== undefined && hash !== undefined && hash !== reference);
}
