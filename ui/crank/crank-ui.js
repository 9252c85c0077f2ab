// GET /crank/ui: draws the crank machine from GET /crank/machine (the server reads it from the
// machine's own state nodes), then polls GET /crank/activity to highlight the current state and
// list recent cycles and actions, and GET /health for the status and last_error in the header
// (the page must never look calm while /health is degraded). Same origin only: the browser sends its cached Basic-auth
// credentials with every request.
// biome-ignore lint/suspicious/noRedundantUseStrict: index.html loads a classic script (no type="module"), where strict mode is opt-in
'use strict';

const POLL_INTERVAL_MS = 1000;
const SVG_NS = 'http://www.w3.org/2000/svg';
const LAYOUT = {
  margin: 130, // lanes for transitions that go up
  rightMargin: 180, // lanes for transitions that go down more than one row
  top: 20,
  rowGap: 64,
  atomic: { width: 170, height: 44 },
  child: { width: 150, height: 44, gap: 40 },
  header: 26,
  padding: 16,
  laneStep: 14,
};

const chart = document.getElementById('chart');
const statusLine = document.getElementById('status');
const currentState = document.getElementById('current-state');
const roleLine = document.getElementById('role');
const healthStatus = document.getElementById('health-status');
const lastError = document.getElementById('last-error');
const HEALTH_STATUSES = ['ok', 'degraded', 'stalled', 'unreachable'];

/** A cycle that could not submit: it read and planned only. */
const CYCLE_KINDS = { active: 'active', standby: 'standby (read only)', halted: 'halted (read only)', dry_run: 'dry run (read only)' };
const leaseLine = document.getElementById('lease');
const landingLine = document.getElementById('landing');
const watchdogLine = document.getElementById('watchdog');

function svg(tag, attributes, parent) {
  const element = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  parent.appendChild(element);
  return element;
}

/** Top-level states one per row; a compound state's children side by side inside it. */
function layout(root) {
  const boxes = new Map();
  let y = LAYOUT.top;
  let width = 0;
  root.states.forEach((state, row) => {
    if (state.states.length === 0) {
      boxes.set(state.id, { x: LAYOUT.margin, y, ...LAYOUT.atomic, row, state });
      y += LAYOUT.atomic.height + LAYOUT.rowGap;
      width = Math.max(width, LAYOUT.atomic.width);
      return;
    }
    const { child, header, padding } = LAYOUT;
    const inner = state.states.length * child.width + (state.states.length - 1) * child.gap;
    const box = { x: LAYOUT.margin, y, width: inner + 2 * padding, height: header + child.height + padding, row, state };
    boxes.set(state.id, box);
    state.states.forEach((sub, n) => {
      boxes.set(sub.id, {
        x: box.x + padding + n * (child.width + child.gap),
        y: y + header,
        width: child.width,
        height: child.height,
        row,
        state: sub,
        parent: state.id,
      });
    });
    y += box.height + LAYOUT.rowGap;
    width = Math.max(width, box.width);
  });
  return { boxes, contentRight: LAYOUT.margin + width, width: width + LAYOUT.margin + LAYOUT.rightMargin, height: y - LAYOUT.rowGap + LAYOUT.top };
}

function shortEvent(event) {
  if (event === 'always') return '';
  const done = /^xstate\.(done|error)\.actor\.(\w+)$/.exec(event);
  if (done) return `${done[1]}: ${done[2]}`;
  const after = /^xstate\.after\.(\w+)\./.exec(event);
  if (after) return `after ${after[1]}`;
  return event;
}

function transitionLabel(transition) {
  const event = shortEvent(transition.event);
  const guard = transition.guard ? `[${transition.guard}]` : '';
  return [event, guard].filter(Boolean).join(' ') || 'always';
}

/** One path per (source, target) pair, labelled with every event that takes it. */
function groupTransitions(transitions) {
  const groups = new Map();
  for (const transition of transitions) {
    const key = `${transition.source}>${transition.target}`;
    const group = groups.get(key) ?? { source: transition.source, target: transition.target, labels: [] };
    group.labels.push(transitionLabel(transition));
    groups.set(key, group);
  }
  return [...groups.values()];
}

function edgePath(from, to, lanes, size, siblingArcs) {
  const fromRight = from.x + from.width;
  if (from === to) {
    const x = fromRight;
    const y = from.y + from.height / 2;
    return { d: `M ${x} ${y - 8} C ${x + 40} ${y - 30}, ${x + 40} ${y + 30}, ${x} ${y + 8}`, label: { x: x + 42, y } };
  }
  if (from.parent !== undefined && from.parent === to.parent) {
    // Siblings: forward along the bottom, backward arched over the top.
    const forward = to.x > from.x;
    const y = forward ? from.y + from.height : from.y;
    const x1 = from.x + from.width / 2;
    const x2 = to.x + to.width / 2;
    const bend = forward ? y + 22 : y - 16;
    // Labels of neighbouring arcs alternate between two lines so that long guards stay legible.
    const stagger = forward ? (siblingArcs.forward++ % 2) * 12 + 4 : -2;
    return { d: `M ${x1} ${y} C ${x1} ${bend}, ${x2} ${bend}, ${x2} ${y}`, label: { x: (x1 + x2) / 2, y: bend + stagger, anchor: 'middle' } };
  }
  if (to.row === from.row + 1) {
    const x1 = from.x + from.width / 2;
    const y1 = from.y + from.height;
    const x2 = Math.min(Math.max(x1, to.x + 20), to.x + to.width - 20);
    const y2 = to.y;
    return {
      d: `M ${x1} ${y1} C ${x1} ${y1 + 30}, ${x2} ${y2 - 30}, ${x2} ${y2}`,
      label: x2 === x1 ? { x: x2 + 4, y: y2 - 10 } : { x: (x1 + x2) / 2 + 4, y: (y1 + y2) / 2 + 4 },
    };
  }
  // Farther rows: up along a left lane, down along a right lane.
  const up = to.row < from.row;
  const lane = lanes[up ? 'left' : 'right']++;
  const y1 = from.y + from.height / 2;
  const y2 = to.y + (to.state.states.length > 0 ? LAYOUT.header / 2 : to.height / 2);
  if (up) {
    const x = LAYOUT.margin - 20 - lane * LAYOUT.laneStep;
    return { d: `M ${from.x} ${y1} H ${x} V ${y2} H ${to.x}`, label: { x: x - 4, y: (y1 + y2) / 2, anchor: 'end' } };
  }
  // Many states lead down to the same target (STOP): their labels are written once, at the target.
  const x = size.contentRight + 20 + lane * LAYOUT.laneStep;
  return { d: `M ${fromRight} ${y1} H ${x} V ${y2} H ${to.x + to.width}`, atTarget: { x: to.x + to.width + 8, y: y2 - 5 } };
}

function drawChart(graph) {
  const size = layout(graph.root);
  chart.setAttribute('viewBox', `0 0 ${size.width} ${size.height}`);
  chart.setAttribute('width', String(size.width));
  const defs = svg('defs', {}, chart);
  const marker = svg(
    'marker',
    { id: 'arrow', viewBox: '0 0 10 10', refX: 10, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' },
    defs,
  );
  svg('path', { d: 'M 0 0 L 10 5 L 0 10 z' }, marker);

  for (const box of size.boxes.values()) {
    const { state } = box;
    const group = svg('g', { class: `state ${state.type}`, 'data-state-id': state.id }, chart);
    svg('rect', { x: box.x, y: box.y, width: box.width, height: box.height, rx: 8 }, group);
    const compound = state.states.length > 0;
    const label = svg('text', { x: box.x + 10, y: box.y + (compound ? 18 : 19) }, group);
    label.textContent = state.key;
    const details = [...state.invokes.map((src) => `invokes ${src}`), ...state.tags];
    if (details.length > 0) {
      const detail = svg('text', { class: 'detail', x: box.x + (compound ? 120 : 10), y: box.y + (compound ? 18 : 36) }, group);
      detail.textContent = details.join(' · ');
    }
  }

  const lanes = { left: 0, right: 0 };
  const siblingArcs = { forward: 0 };
  const labelsAtTarget = new Map();
  for (const group of groupTransitions(graph.transitions)) {
    const from = size.boxes.get(group.source);
    const to = size.boxes.get(group.target);
    if (from === undefined || to === undefined) continue;
    const path = edgePath(from, to, lanes, size, siblingArcs);
    const edge = svg('g', { class: 'edge', 'data-source': group.source, 'data-target': group.target }, chart);
    svg('path', { d: path.d, 'marker-end': 'url(#arrow)' }, edge);
    if (path.atTarget !== undefined) {
      const atTarget = labelsAtTarget.get(group.target) ?? { ...path.atTarget, labels: new Set() };
      for (const label of group.labels) atTarget.labels.add(label);
      labelsAtTarget.set(group.target, atTarget);
      continue;
    }
    const text = svg('text', { x: path.label.x, y: path.label.y, 'text-anchor': path.label.anchor ?? 'start' }, edge);
    text.textContent = group.labels.join(', ');
  }
  for (const label of labelsAtTarget.values()) {
    const text = svg('text', { x: label.x, y: label.y }, svg('g', { class: 'edge' }, chart));
    text.textContent = [...label.labels].join(', ');
  }
}

function fillTransitionsTable(graph) {
  const body = document.querySelector('#transitions tbody');
  for (const transition of graph.transitions) {
    row(body, [transition.source, shortEvent(transition.event) || 'always', transition.guard ?? '', transition.target]);
  }
}

function row(body, cells, classes = []) {
  const tr = document.createElement('tr');
  cells.forEach((cell, n) => {
    const td = document.createElement('td');
    td.textContent = cell;
    if (classes[n]) td.className = classes[n];
    tr.appendChild(td);
  });
  body.appendChild(tr);
}

function time(ms) {
  return new Date(ms).toISOString().slice(11, 19);
}

function entries(indices) {
  if (indices.length === 0) return '';
  return indices.length === 1 ? String(indices[0]) : `${indices[0]}..${indices[indices.length - 1]} (${indices.length})`;
}

/** A standby submits nothing until the time it gives, and then only if no other instance signed meanwhile. */
function roleText(role) {
  if (role === undefined) return 'none (crank disabled)';
  if (role.role === 'active') return 'active: this server signs';
  return `standby: this server submits nothing; it may sign from ${time(role.may_sign_at * 1000)} UTC if no other instance signs with its key before then`;
}

/** The signing lease beside the role (GET /health's crank.lease): absent while the lease is off. */
function leaseText(lease) {
  if (lease === undefined) return 'off';
  if (lease.status === 'waiting') return `waiting until ${time(lease.may_take_at * 1000)} UTC (another instance holds it)`;
  if (lease.status === 'taken') return 'taken by another instance';
  return lease.status;
}

/**
 * /health's crank: what landed, per chain over the last ten minutes, and what is signed but has
 * no outcome yet. Counted from landings, never from signatures: during a send outage nothing
 * gets an outcome, and "n of n landed" would describe the minutes before it.
 */
function landingText(crank) {
  if (crank?.landing === undefined) return 'none (crank disabled)';
  const last = crank.last_success_at === null ? 'no action done since the start' : `last action done ${time(crank.last_success_at * 1000)} UTC`;
  const chain = (name, summary, inFlight) => {
    const pending = `${inFlight} signed and still without an outcome`;
    if (summary.landed === 0) return `${name}: nothing landed in the last 10 min, ${summary.transactions} could no longer land, ${pending}`;
    const rate = summary.first_version_rate === null ? 'n/a' : `${Math.round(summary.first_version_rate * 100)} %`;
    return (
      `${name}: ${summary.landed} landed in the last 10 min, ${summary.transactions - summary.landed} could no longer land, ${pending}; ` +
      `${rate} on the first version, ${summary.slots_p50} / ${summary.slots_p90} slots to land (p50 / p90), ${summary.versions_per_landed ?? 'n/a'} versions per landed`
    );
  };
  const inFlight = crank.versions_in_flight ?? { source: 0, target: 0 };
  return `${last}; ${chain('source', crank.landing.source, inFlight.source)}; ${chain('destination', crank.landing.target, inFlight.target)}`;
}

/** /health's crank.watchdog: what holds this authority's signing (a breach, a program hash), and the transfer the flow breaker holds. */
function watchdogText(watchdog) {
  if (watchdog === undefined) return 'off';
  const parts = [];
  for (const [chain, name] of [
    ['source', 'source'],
    ['target', 'destination'],
  ]) {
    if (watchdog.held[chain] !== null) parts.push(`${name} held: ${watchdog.held[chain]}`);
  }
  const flow = watchdog.flow_held;
  if (flow !== null)
    parts.push(
      `flow breaker holds entry ${flow.index} (${flow.amount} of ${flow.mint}; ${flow.carried} voted in ${flow.window_hours} h, limit ${flow.limit}): npm run ops -- flow release ${flow.id}`,
    );
  return parts.length === 0 ? 'nothing held' : parts.join('; ');
}

function showActivity(activity) {
  roleLine.textContent = roleText(activity.role);
  leaseLine.textContent = leaseText(activity.lease);
  roleLine.classList.toggle('standby', activity.role?.role === 'standby');
  const active = new Set(activity.state);
  for (const element of chart.querySelectorAll('[data-state-id]')) {
    element.classList.toggle('active', active.has(element.getAttribute('data-state-id')));
  }
  const leaf = activity.state[activity.state.length - 1];
  for (const element of chart.querySelectorAll('.edge')) element.classList.toggle('live', element.getAttribute('data-source') === leaf);
  currentState.textContent = activity.state.length === 0 ? 'crank disabled' : leaf.replace(/^[^.]+\./, '');

  const cycles = document.querySelector('#cycles tbody');
  cycles.replaceChildren();
  for (const cycle of activity.cycles) {
    const { report } = cycle;
    const summary = `ack_deposit ${report.ack_deposit_attempted ? 'yes' : 'no'}, ack_withdraw ${report.ack_withdraw_attempted ? 'yes' : 'no'}, cleanup ${report.cleanup_completed}/${report.cleanup_attempted}`;
    row(
      cycles,
      [time(cycle.atMs), CYCLE_KINDS[cycle.kind] ?? cycle.kind, cycle.outcome, `${cycle.durationMs} ms`, summary],
      ['', `kind-${cycle.kind}`, cycle.outcome],
    );
  }
  const actions = document.querySelector('#actions tbody');
  actions.replaceChildren();
  for (const action of activity.actions) {
    const signatures = action.signatures.length === 0 ? '' : `${action.signatures.length}: ${action.signatures[0].slice(0, 12)}...`;
    const outcome = action.outcome === 'failed' && action.willRetry ? 'failed, retrying' : action.outcome;
    row(
      actions,
      [time(action.atMs), action.action, String(action.attempt), outcome, entries(action.indices), signatures, action.error ?? ''],
      ['', '', '', action.outcome, 'mono', 'mono'],
    );
  }
}

function showHealth(status, error) {
  healthStatus.textContent = status;
  for (const name of HEALTH_STATUSES) healthStatus.classList.toggle(name, name === status);
  lastError.textContent = error ?? '';
}

/** /health answers 503 with its body when stalled: that answer is the news, not a failure. Its crank object, or undefined when unreachable. */
async function pollHealth() {
  try {
    const response = await fetch(new URL('/health', window.location.origin), { credentials: 'same-origin', cache: 'no-store' });
    if (response.status !== 200 && response.status !== 503) throw new Error(`/health answered ${response.status}`);
    const health = await response.json();
    showHealth(health.status, health.crank?.last_error);
    return health.crank;
  } catch (err) {
    showHealth('unreachable', err.message);
    return undefined;
  }
}

function setStatus(text, isError) {
  statusLine.textContent = text;
  statusLine.classList.toggle('error', isError);
}

async function getJson(path) {
  // From the origin, never from the page's URL: a page opened as http://user:pass@host/... has
  // credentials in its URL, and fetch refuses to build a request from such a URL.
  const response = await fetch(new URL(path, window.location.origin), { credentials: 'same-origin', cache: 'no-store' });
  if (!response.ok) throw new Error(`${path} answered ${response.status}`);
  return response.json();
}

async function poll() {
  try {
    const crank = await pollHealth();
    showActivity(await getJson('/crank/activity'));
    landingLine.textContent = landingText(crank);
    watchdogLine.textContent = watchdogText(crank?.watchdog);
    setStatus(`updated ${new Date().toISOString().slice(11, 19)} UTC`, false);
  } catch (err) {
    setStatus(`cannot update: ${err.message}`, true);
  } finally {
    setTimeout(poll, POLL_INTERVAL_MS);
  }
}

async function start() {
  try {
    const graph = await getJson('/crank/machine');
    drawChart(graph);
    fillTransitionsTable(graph);
    chart.setAttribute('data-drawn', 'true');
  } catch (err) {
    setStatus(`cannot load the machine: ${err.message}`, true);
    return;
  }
  await poll();
}

void start();
