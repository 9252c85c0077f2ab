import { describe, expect, it } from 'vitest';
import { AGAVE_COMMITMENT_LAGS } from '../devnet/index.js';
import { SEQUENCES_ON_BANKS, checkTransferPhases } from './model/transfer-property.js';
import { propertyProfile } from './support/profile.js';

/**
 * three-authorities.test.ts's model on Agave's banks (confirmed 2, finalized 32 slots behind the
 * head): the cranks read the source at finalized, so every phase waits for finality.
 */

const profile = propertyProfile();
const ON_BANKS =
  "transfer phases: 3 authorities, threshold 2, authority 2 byzantine, on Agave's banks (confirmed 2, finalized 32 slots behind the head)";

describe("model-based: random interleavings against the devnet, on Agave's banks", () => {
  it(
    ON_BANKS,
    async () => {
      const config = { authorities: 3, threshold: 2, byzantine: [2], commitmentLags: AGAVE_COMMITMENT_LAGS };
      const summary = await checkTransferPhases(ON_BANKS, config, profile, SEQUENCES_ON_BANKS[profile]);
      console.info(`${ON_BANKS} (${profile}): ${JSON.stringify(summary)}`);
      expect(summary.sequences).toBeGreaterThan(0);
    },
    SEQUENCES_ON_BANKS[profile].timeoutMs,
  );
});
