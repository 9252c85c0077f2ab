import type { SignerObserver } from '../authority-signer.js';
import { KEY_SERVICE_CALL_TIMEOUT_MS } from './remote-signer.js';
import { firstLine } from '../signer-failure.js';

/**
 * Keeps a renewable Vault token alive while the server signs with it, as Vault Agent's lifetime
 * watcher does: `auth/token/lookup-self` says whether the token is renewable and its TTL, and
 * `auth/token/renew-self` is asked when half of the lease is left (half of what is then left
 * after a failed renewal, while that is over MIN_RETRY_MS). A renewal that no longer extends the
 * token (its max TTL is reached) ends the watch: the token's source must then hold a new one,
 * which is watched from its first use. A token that is not renewable (a root token, a batch
 * token) or whose lookup is refused is only used. The calls of one token are at most
 * log2(TTL / MIN_RETRY_MS) + the renewals its max TTL allows, each bounded by
 * KEY_SERVICE_CALL_TIMEOUT_MS; the timer never keeps the process alive. Each renewal's outcome,
 * and a refused or unanswered lookup, goes to the observer (a counter and, when it failed, a
 * `warn` line: ./token-renewal-report.ts), never with the token.
 */

export type VaultCall = (
  method: 'GET' | 'POST',
  path: string,
  body: object | undefined,
  signal: AbortSignal,
  meaning: { capability: 'read' | 'update'; missing?: string },
) => Promise<Record<string, unknown>>;

const MIN_RETRY_MS = 1_000;
const EXTENSION_SLACK_MS = 500;
// setTimeout's largest delay (about 24.8 days); a longer lease is looked at again then.
const MAX_DELAY_MS = 2 ** 31 - 1;

export class TokenLease {
  readonly #call: VaultCall;
  readonly #token: { current(): string };
  #watched: string | undefined;
  #timer: NodeJS.Timeout | undefined;
  #expiresAtMs = 0;
  #observer: SignerObserver | undefined;

  constructor(call: VaultCall, token: { current(): string }) {
    this.#call = call;
    this.#token = token;
  }

  /** Where renewals are reported from now on. */
  observe(observer: SignerObserver): void {
    this.#observer = observer;
  }

  /** Watches the token the source holds now, once per token; never throws. */
  watch(): void {
    let token: string;
    try {
      token = this.#token.current();
    } catch {
      return;
    }
    if (token === this.#watched) return;
    this.#watched = token;
    clearTimeout(this.#timer);
    void this.#lookup(token);
  }

  async #lookup(token: string): Promise<void> {
    const answer = await this.#ask('GET', 'lookup-self');
    if (token !== this.#watched) return;
    if (answer instanceof Error) {
      this.#observer?.tokenRenewal(
        'failed',
        `the token's lookup (auth/token/lookup-self) failed, so it is only used, never renewed: ${firstLine(answer)}`,
      );
      return;
    }
    const data = answer['data'] as { renewable?: unknown; ttl?: unknown } | undefined;
    if (data?.renewable === true && typeof data.ttl === 'number' && data.ttl > 0) this.#schedule(data.ttl * 1000);
  }

  async #renew(token: string): Promise<void> {
    const before = this.#expiresAtMs;
    const answer = await this.#ask('POST', 'renew-self');
    if (token !== this.#watched) return;
    const left = before - Date.now();
    if (answer instanceof Error) {
      const retried = left > 2 * MIN_RETRY_MS;
      if (retried) this.#timer = timer(left / 2, () => void this.#renew(token));
      const next = retried ? `tried again in ${Math.round(left / 2_000)} s` : 'not tried again';
      this.#observer?.tokenRenewal('failed', `${firstLine(answer)}; the token expires in ${Math.max(0, Math.round(left / 1000))} s, renewal ${next}`);
      return;
    }
    const auth = answer['auth'] as { renewable?: unknown; lease_duration?: unknown } | undefined;
    if (auth?.renewable !== true || typeof auth.lease_duration !== 'number') {
      this.#observer?.tokenRenewal('not_extended');
      return;
    }
    const leaseMs = auth.lease_duration * 1000;
    // Capped by the token's max TTL: renewing again would not extend it. Vault's whole-second
    // lease_duration and the answer's latency blur the comparison by under EXTENSION_SLACK_MS.
    if (Date.now() + leaseMs <= before + EXTENSION_SLACK_MS) {
      this.#observer?.tokenRenewal('not_extended');
      return;
    }
    this.#observer?.tokenRenewal('renewed');
    this.#schedule(leaseMs);
  }

  #schedule(leaseMs: number): void {
    this.#expiresAtMs = Date.now() + leaseMs;
    const token = this.#watched!;
    this.#timer = timer(Math.max(leaseMs / 2, MIN_RETRY_MS), () => void this.#renew(token));
  }

  #ask(method: 'GET' | 'POST', action: 'lookup-self' | 'renew-self'): Promise<Record<string, unknown> | Error> {
    const body = method === 'POST' ? {} : undefined;
    return this.#call(method, `/v1/auth/token/${action}`, body, AbortSignal.timeout(KEY_SERVICE_CALL_TIMEOUT_MS), { capability: 'update' }).catch(
      (err: unknown) => (err instanceof Error ? err : new Error(String(err))),
    );
  }
}

function timer(delayMs: number, run: () => void): NodeJS.Timeout {
  const handle = setTimeout(run, Math.min(delayMs, MAX_DELAY_MS));
  handle.unref();
  return handle;
}
