import type { CrankService } from '../machines/crank-service.js';

/**
 * The crank the HTTP app and the shutdown are built with before the port is bound. The process
 * binds first and starts the crank only once listening succeeded, so a port in use runs no
 * cycle and signs nothing. Until `begin`, it answers as `before` does (a disabled crank); the
 * process calls `begin` in the same turn as the listen resolves, so no request sees that. A
 * shutdown that began while the port was being bound stops `before`, and `begin` then starts
 * nothing: a crank started after its stop would run cycles nothing stops.
 */
export interface CrankAfterListen {
  readonly service: CrankService;
  begin(start: () => CrankService): void;
}

export function crankAfterListen(before: CrankService): CrankAfterListen {
  let current = before;
  let stopped = false;
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
      stop: (deadlineMs) => {
        stopped = true;
        return current.stop(deadlineMs);
      },
    },
    begin: (start) => {
      if (!stopped) current = start();
    },
  };
}
