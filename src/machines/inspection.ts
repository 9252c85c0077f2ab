import type { createWebSocketInspector } from '@statelyai/inspect';
import type { InspectionEvent, MachineContext, AnyEventObject, StateValue } from 'xstate';
import { describeError } from '../errors.js';
import { activeStateIds } from './crank-activity.js';
import type { Logger } from '../log/logger.js';
import { redactSecrets } from '../log/redact.js';

/**
 * Watching the crank actor. At debug level every transition of the crank is logged (one
 * check of the level otherwise, so it costs nothing when disabled). With BRIDGE_XSTATE_INSPECT
 * set, inspection events also go to @statelyai/inspect's WebSocket inspector at that URL,
 * and only there (never a hosted relay). What leaves is sanitized: errors become their
 * messages, anything that is not JSON is dropped, and the log redaction runs over the rest.
 * The context never holds the signing key; this is the second line of defence.
 * @statelyai/inspect is loaded only when BRIDGE_XSTATE_INSPECT is set, after the start: the
 * events of its first tenth of a second wait for it.
 */

type RemoteInspector = Pick<ReturnType<typeof createWebSocketInspector>, 'stop'> & { inspect(event: InspectionEvent): void };

/** Events held while the inspector loads: a few cycles' transitions; beyond it the oldest are dropped. */
const PENDING_EVENTS_MAX = 1_000;

export interface CrankInspection {
  inspect(event: InspectionEvent): void;
  stop(): void;
}

export function createCrankInspection(log: Logger, inspectUrl: string | undefined): CrankInspection {
  const remote = inspectUrl === undefined ? undefined : remoteInspector(log, inspectUrl);
  // The origin only: an inspector URL may carry a session token in its path or query.
  if (inspectUrl !== undefined) log.info({ inspector: new URL(inspectUrl).origin }, 'crank: sending inspection events to BRIDGE_XSTATE_INSPECT');

  return {
    inspect(event) {
      logTransition(log, event);
      remote?.inspect(event);
    },
    stop() {
      remote?.stop();
    },
  };
}

function remoteInspector(log: Logger, url: string): RemoteInspector {
  let remote: ReturnType<typeof createWebSocketInspector> | undefined;
  let pending: InspectionEvent[] | undefined = [];
  void import('@statelyai/inspect').then(
    ({ createWebSocketInspector }) => {
      if (pending === undefined) return;
      remote = createWebSocketInspector({
        url,
        sanitizeContext: (context: MachineContext) => sanitizeInspected(context) as MachineContext,
        sanitizeEvent: (event: AnyEventObject) => sanitizeInspected(event) as AnyEventObject,
        // Covers what the two hooks above do not see, e.g. the input and error of child actors.
        serialize: (event) => sanitizeInspected(event) as typeof event,
      });
      for (const event of pending) remote.inspect.next?.(event);
      pending = undefined;
    },
    (err: unknown) => {
      pending = undefined;
      log.warn({ reason: describeError(err) }, 'crank: @statelyai/inspect did not load; no inspection events are sent');
    },
  );
  return {
    inspect(event) {
      if (remote !== undefined) remote.inspect.next?.(event);
      else if (pending !== undefined && pending.push(event) > PENDING_EVENTS_MAX) pending.shift();
    },
    stop() {
      pending = undefined;
      remote?.stop();
    },
  };
}

function logTransition(log: Logger, event: InspectionEvent): void {
  if (!log.isLevelEnabled('debug')) return;
  if (event.type !== '@xstate.snapshot' || event.actorRef.sessionId !== event.rootId) return;
  const snapshot = event.snapshot as { value?: StateValue };
  // One type per log key: xstate's value is a string or an object; the line carries the leaf's path ("ack_deposit.submitting").
  const state = snapshot.value === undefined ? undefined : activeStateIds(snapshot.value, 'crank').at(-1)?.slice('crank.'.length);
  log.debug({ event: event.event.type, state }, 'crank transition');
}

/**
 * A JSON-only copy: errors as their messages, bigint as decimal strings, functions dropped;
 * then redacted. Never throws (the inspector calls it from a timer, where a throw would be an
 * uncaught exception): what cannot be serialized is replaced by a marker.
 */
export function sanitizeInspected(value: unknown): unknown {
  if (value === undefined) return undefined;
  try {
    const json = JSON.stringify(value, (_key, item: unknown) => {
      if (item instanceof Error) return { error: describeError(item) };
      if (typeof item === 'bigint') return item.toString();
      return item;
    });
    return json === undefined ? undefined : redactSecrets(JSON.parse(json));
  } catch {
    return UNSERIALIZABLE;
  }
}

const UNSERIALIZABLE = { unserializable: 'left out by the crank inspector: not JSON' };
