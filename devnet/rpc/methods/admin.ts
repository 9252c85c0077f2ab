import type { FaultSettings } from '../../faults/settings.js';
import { invalidParams } from '../errors.js';
import type { RpcMethod } from '../method.js';
import { isDevnetError } from '../../devnet-error.js';
import { rehearsalMethods } from './rehearsal.js';

/**
 * Admin methods of the devnet (never on a real cluster): fault injection over JSON-RPC, for
 * operators rehearsing incidents from another process, and the bridge program's compute costs.
 * Faults never apply to these methods.
 */

const devnet_setFaults: RpcMethod = (params, { faults }) => {
  try {
    return faults.set((params[0] ?? {}) as FaultSettings);
  } catch (err) {
    if (isDevnetError(err, 'DEVNET__INVALID_OPTION')) throw invalidParams(`Invalid params: ${err.message}`);
    throw err;
  }
};

/**
 * A program upgrade while the chain runs: [scale] multiplies the bridge program's compute costs
 * of this version (PROTOCOL.md "Compute units and fees"). Answers the new cost table.
 */
const devnet_setComputeCostScale: RpcMethod = (params, { bank }) => {
  const scale = params[0];
  if (typeof scale !== 'number') throw invalidParams('Invalid params: expected [scale], a number');
  try {
    return bank.setComputeCostScale(scale);
  } catch (err) {
    if (isDevnetError(err, 'DEVNET__INVALID_OPTION')) throw invalidParams(`Invalid params: ${err.message}`);
    throw err;
  }
};

const devnet_getComputeCosts: RpcMethod = (_params, { bank }) => bank.computeCosts;

const devnet_clearFaults: RpcMethod = (_params, { faults }) => faults.clear();

const devnet_getFaults: RpcMethod = (_params, { faults }) => faults.snapshot();

export const adminMethods = {
  devnet_setFaults,
  devnet_clearFaults,
  devnet_getFaults,
  devnet_setComputeCostScale,
  devnet_getComputeCosts,
  ...rehearsalMethods,
};
