import { BridgeError } from '../errors.js';
import { createCrankActivityLog } from './crank-activity.js';
import type { CrankService } from './crank-service.js';
import { DISABLED_CRANK_HEALTH } from './health.js';

/**
 * The CrankService of a server started without runtime configuration: /health reports
 * `enabled: false` and POST /crank/once and POST /crank/poll are refused with an error that says what to set.
 */
export function createDisabledCrank(): CrankService {
  return {
    health: () => ({ ...DISABLED_CRANK_HEALTH }),
    status: () => 'ok',
    report: () => ({ status: 'ok', crank: { ...DISABLED_CRANK_HEALTH } }),
    activity: createCrankActivityLog(),
    role: () => null,
    runOnce: () => Promise.reject(crankDisabledError()),
    poll: () => {
      throw crankDisabledError();
    },
    stop: () => Promise.resolve(),
  };
}

export function crankDisabledError(): BridgeError<'CRANK__DISABLED'> {
  return new BridgeError('CRANK__DISABLED', {});
}
