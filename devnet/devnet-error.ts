import { CodedError } from '../src/errors.js';

/**
 * The devnet's own errors, apart from the server's BridgeError (the same CodedError: a code
 * per failure, a typed context, a message that names the option, chain or account involved).
 */
export interface DevnetErrorContexts {
  /** A devnet option, CLI flag or fault setting is out of range; `option` names it. */
  DEVNET__INVALID_OPTION: { option: string; reason: string };
  /** The devnet could not listen on its port (in use, not permitted). */
  DEVNET__FAILED_TO_LISTEN: { chain: string; port: number; reason: string };
  /** A bootstrap, traffic or demo transaction did not land, or landed with an error. */
  DEVNET__FAILED_TO_SUBMIT: { chain: string; step: string; signature?: string; err?: string };
  /** Devnet state does not allow the requested test affordance (e.g. seeding an unsettled tracker). */
  DEVNET__INVALID_STATE: { account: string; reason: string };
}

export type DevnetErrorCode = keyof DevnetErrorContexts;

export class DevnetError<C extends DevnetErrorCode = DevnetErrorCode> extends CodedError<DevnetErrorContexts, C> {
  override readonly name = 'DevnetError';
}

export function isDevnetError<C extends DevnetErrorCode>(err: unknown, code?: C): err is DevnetError<C> {
  return err instanceof DevnetError && (code === undefined || err.code === code);
}
