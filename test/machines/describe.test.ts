import { describe, expect, it } from 'vitest';
import { describeFailed, describeLanded } from '../../src/machines/crank-telemetry.js';

const landed = (alreadyDone: number[] = []) => ({ transactions: [], completed: [], alreadyDone });

describe('last_action lines', () => {
  it.each([
    [describeLanded('ack_deposit', [120, 121, 122, 123, 124, 125, 126, 127, 128, 129], landed()), 'ack_deposit 120..129 (10 votes)'],
    [describeLanded('ack_withdraw', [7], landed()), 'ack_withdraw 7 (1 vote)'],
    [describeLanded('cleanup', [1, 4, 9, 12], landed()), 'cleanup_deposit 4 entries'],
    [describeLanded('cleanup', [3], landed([3])), 'cleanup_deposit 1 entry (1 already done)'],
    [describeFailed('ack_deposit', [5, 6], 3), 'ack_deposit 5..6 (2 votes) failed after 3 attempts'],
    [describeFailed('ack_withdraw', [], 1), 'ack_withdraw failed after 1 attempt'],
  ])('%s', (line, expected) => {
    expect(line).toBe(expected);
  });
});
