import type { Logger } from '../log/logger.js';
import type { Metrics } from '../metrics/metrics.js';
import { TOKEN_RENEWAL_OUTCOMES, type SignerObserver } from './authority-signer.js';
import { printableLine } from './signer-failure.js';

/**
 * A key service's token renewals as the operator sees them: every outcome counted
 * (`bridge_signer_token_renewals_total{outcome}`), a failed one also one `warn` line, so a token
 * that will expire is seen before the 403 that ends its signatures. The detail is the service's
 * error on one line, control characters escaped; no error carries the token (vault-http.ts).
 * Made only for a signer that renews a token: its counters exist at 0 from then on, so that
 * `increase()` counts the first failure.
 */
export function tokenRenewalReport(logger: Logger, metrics: Metrics): SignerObserver {
  for (const outcome of TOKEN_RENEWAL_OUTCOMES) metrics.signerTokenRenewals.inc({ outcome }, 0);
  return {
    tokenRenewal(outcome, detail) {
      metrics.signerTokenRenewals.inc({ outcome });
      if (outcome !== 'failed') return;
      const reason = printableLine(detail ?? 'no reason given');
      logger.warn(
        { outcome, reason },
        'the key service token could not be renewed: signing goes on with it until it expires; renew it or write a new one where it is read',
      );
    },
  };
}
