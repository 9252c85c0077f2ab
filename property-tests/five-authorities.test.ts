import { describe, expect, it } from 'vitest';
import { SEQUENCES, checkTransferPhases } from './model/transfer-property.js';
import { propertyProfile } from './support/profile.js';

/** 5 authorities, threshold 3: authorities 0 and 4 are byzantine, authorities 1, 2 and 3 run the real crank. */

const profile = propertyProfile();
const NAME = 'transfer phases: 5 authorities, threshold 3, authorities 0 and 4 byzantine';

describe('model-based: random interleavings against the devnet', () => {
  it(
    NAME,
    async () => {
      const summary = await checkTransferPhases(NAME, { authorities: 5, threshold: 3, byzantine: [0, 4] }, profile);
      console.info(`${NAME} (${profile}): ${JSON.stringify(summary)}`);
      expect(summary.sequences).toBeGreaterThan(0);
    },
    SEQUENCES[profile].timeoutMs,
  );
});
