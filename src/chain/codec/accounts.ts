/** Account codecs (PROTOCOL.md "Accounts"): the public surface; each record lives in its own module. */
export { assertOwnedBy } from './owner.js';
export { decodeTrackerHeader, encodeTrackerHeader } from './tracker-header.js';
export {
  decodeDepositEntries,
  decodeDepositEntry,
  decodeWithdrawEntries,
  decodeWithdrawEntry,
  encodeDepositEntry,
  encodeWithdrawEntry,
} from './entries.js';
export { decodeTokenPair, encodeTokenPair } from './token-pair.js';
export { decodeDepositResult, encodeDepositResult } from './deposit-result.js';
