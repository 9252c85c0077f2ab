import { describe, expect, it } from 'vitest';
import { AGAVE_COMMITMENT_LAGS } from '../devnet/index.js';
import { SEQUENCES, SEQUENCES_ON_BANKS, checkTransferPhases } from './model/transfer-property.js';
import { propertyProfile } from './support/profile.js';

/** 3 authorities, threshold 2: authority 2 is byzantine, authorities 0 and 1 run the real crank. */

const profile = propertyProfile();
const NAME = 'transfer phases: 3 authorities, threshold 2, authority 2 byzantine';
const ON_BANKS = `${NAME}, on Agave's banks (confirmed 2, finalized 32 slots behind the head)`;

describe('model-based: random interleavings against the devnet', () => {
  it(
    NAME,
    async () => {
      const summary = await checkTransferPhases(NAME, { authorities: 3, threshold: 2, byzantine: [2] }, profile);
      console.info(`${NAME} (${profile}): ${JSON.stringify(summary)}`);
      expect(summary.sequences).toBeGreaterThan(0);
    },
    SEQUENCES[profile].timeoutMs,
  );

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
