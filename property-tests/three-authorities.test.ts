import { describe, expect, it } from 'vitest';
import { SEQUENCES, checkTransferPhases } from './model/transfer-property.js';
import { propertyProfile } from './support/profile.js';

/**
 * 3 authorities, threshold 2: authority 2 is byzantine, authorities 0 and 1 run the real crank.
 * On one bank; three-authorities-banks.test.ts runs the same model on Agave's banks.
 */

const profile = propertyProfile();
const NAME = 'transfer phases: 3 authorities, threshold 2, authority 2 byzantine';

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
});
