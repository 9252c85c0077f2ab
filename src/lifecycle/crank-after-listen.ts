import type { CrankService } from '../machines/crank-service.js';

/**
 * The crank the HTTP app and the shutdown are built with before the port is bound. The process
 * binds first and starts the crank only once listening succeeded, so a port in use runs no
 * cycle and signs nothing. Until `begin`, it answers as `before` does (a disabled crank); the
 * process calls `begin` in the same turn as the listen resolves, so no request sees that.
 */
export interface CrankAfterListen {
  readonly service: CrankService;
  begin(crank: CrankService): void;
}

export function crankAfterListen(before: CrankService): CrankAfterListen {
  let current = before;
  return {
    service: {
      health: () => current.health(),
      status: () => current.status(),
      report: () => current.report(),
      get activity() {
        return current.activity;
      },
      runOnce: (signal) => current.runOnce(signal),
      poll: () => current.poll(),
      role: () => current.role(),
      stop: (deadlineMs) => current.stop(deadlineMs),
    },
    begin: (crank) => {
      current = crank;
    },
  };
}
