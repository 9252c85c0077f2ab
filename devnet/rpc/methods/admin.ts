
import type { FaultSettings } from '../../faults/settings.js';
import { invalidParams } from '../errors.js';
import type { RpcMethod } from '../method.js';
import { isDevnetError } from '../../devnet-error.js';

/**
 * Admin methods of the devnet (never on a real cluster): fault injection over JSON-RPC, for
 * operators rehearsing incidents from another process. Faults never apply to these methods.
 */

const devnet_setFaults: RpcMethod = (params, { faults }) => {
  try {
    return faults.set((params[0] ?? {}) as FaultSettings);
  } catch (err) {
    if (isDevnetError(err, 'DEVNET__INVALID_OPTION')) throw invalidParams(`Invalid params: ${err.message}`);
    throw err;
  }
};

const devnet_clearFaults: RpcMethod = (_params, { faults }) => faults.clear();

const devnet_getFaults: RpcMethod = (_params, { faults }) => faults.snapshot();

export const adminMethods = { devnet_setFaults, devnet_clearFaults, devnet_getFaults };
