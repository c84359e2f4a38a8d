/* SPDX-License-Identifier: MIT */
// parley-web's page: one EventSource on /events, one model, one render.
// Every change arrives as an event (init, info, state, agents, msg, world,
// workflow, workflow_event, dropped, reset, end); nothing is polled. A
// replay gets the recording's events from the start and a slider rebuilds
// the model up to any point. With ?static=1 the page reads the model once
// (GET /api/model), draws it once and keeps no connection open, so a
// headless browser's --virtual-time-budget can finish (docs/WEB.md). The
// workflow panel is workflow.js.
'use strict';

const COLORS = ['#2f6fdf', '#d9480f', '#2b8a3e', '#ae3ec9', '#e67700', '#0c8599', '#c2255c', '#5c940d'];
const MAX_MSGS = 5000;          // messages kept in the page
const SHOWN_MSGS = 400;         // rows drawn in the timeline
const MAX_BEATS = 4096;         // HEARTBEATs waiting for their OK
const STATIC = new URLSearchParams(location.search).has('static');

const $ = (id) => document.getElementById(id);
let M = null;                   // the model
let events = [];                // replay: every event, in order
let replayEnded = false;
let dirty = false;
let source = null;
let openPaths = new Set(['world']);
let selected = null;

function emptyModel(info) {
  return { info: info || {}, state: {}, agents: [], world: null, msgs: [], trails: {},
           steps: {}, actions: {}, seen: {}, channels: new Set(), dims: null, dropped: 0,
           beats: new Set(), workflow: null, wfEvents: [] };
}

function dims() {
  const w = (M.info.world && M.info.world.width) ? M.info.world : M.dims;
  if (!w || !w.width) return null;
  return { width: w.width, height: w.kind === 'grid' ? (w.height || w.width) : 1, kind: w.kind };
}

function stateValue(key) { const e = M.state[key]; return e ? e.value : undefined; }

function noteAgent(name) { if (name && !M.seen[name]) M.seen[name] = {}; }

function applyPositions(positions) {
  if (!positions || typeof positions !== 'object') return;
  for (const [agent, pos] of Object.entries(positions)) {
    noteAgent(agent);
    const trail = M.trails[agent] || (M.trails[agent] = []);
    if (trail[trail.length - 1] !== pos) trail.push(pos);
    if (trail.length > 2000) trail.shift();
  }
}

// A HEARTBEAT and the OK that answers it (same peer, same request id) are
// marked: the timeline hides them unless "heartbeats" is ticked.
function markBeat(m) {
  const key = `${m.peer}#${m.id}`;
  if (m.type === 'HEARTBEAT' && m.dir === 'in') {
    if (M.beats.size >= MAX_BEATS) M.beats.clear();
    M.beats.add(key);
    m.beat = true;
  } else if (m.type === 'OK' && m.dir === 'out' && M.beats.delete(key)) {
    m.beat = true;
  }
}

// A registration forgotten (BYE forget, --forget-after-ms: parley-ctl's
// and the operator's connections among them) is no agent any more: out of
// the table and the legend. Its trail, if it made one, stays on the grid.
function forget(name) {
  delete M.seen[name];
  delete M.steps[name];
  delete M.actions[name];
}

function applyMsg(m) {
  M.msgs.push(m);
  if (M.msgs.length > MAX_MSGS) M.msgs.shift();
  markBeat(m);
  if (m.type === 'AGENT_EVENT' && m.event === 'forgotten' && m.subject) forget(m.subject);
  if (m.type === 'BYE' && m.dir === 'in' && m.forget && m.agent) { forget(m.agent); return; }
  if (m.agent && m.dir === 'in' && m.type !== 'HELLO' && m.type) noteAgent(m.agent);
  if (m.type === 'HELLO' && m.dir === 'in' && m.caps && m.agent && !m.observe) M.seen[m.agent] = { caps: m.caps };
  //  An agent's move: ACT, or the action of its STEP.
  if ((m.type === 'ACT' || (m.type === 'STEP' && m.action)) && m.dir === 'in') {
    if (m.step !== undefined) M.steps[m.agent] = m.step;
    if (m.action) M.actions[m.agent] = m.action;
  }
  if (m.world && m.world.width && !M.dims) M.dims = m.world;
  for (const to of m.to || []) if (to.startsWith('#')) M.channels.add(to);
}

function apply(name, data) {
  switch (name) {
    case 'init':
      M = emptyModel(data.info);
      M.state = data.state || {};
      M.agents = data.agents || [];
      M.world = data.world || null;
      M.trails = data.trails || {};
      M.workflow = data.workflow || null;
      applyPositions(stateValue('world.agent_positions'));
      for (const m of data.recent || []) applyMsg(m);
      break;
    case 'info': M.info = data; break;
    case 'state':
      if (data.value === null) delete M.state[data.key]; else M.state[data.key] = data;
      if (data.key === 'world.agent_positions') applyPositions(data.value);
      if (data.key === 'world.agent_positions' && data.value === null) M.trails = {};
      M.flash = data.key;
      break;
    case 'agents': M.agents = data; for (const a of data) noteAgent(a.agent); break;
    case 'msg': applyMsg(data); break;
    case 'world':
      M.world = data;
      if (data.event === 'reset') M.trails = {};
      break;
    case 'dropped': M.dropped += data.count; M.msgs.push({ gap: data.count, tseq: data.before_tseq }); break;
    case 'workflow': M.workflow = data; break;
    case 'workflow_event': M.wfEvents.push(data); if (M.wfEvents.length > MAX_MSGS) M.wfEvents.shift(); break;
    default: break;
  }
  dirty = true;
}

// --- rendering -------------------------------------------------------------

// Cells any agent has stood on: the team's record (team.visited), each
// agent's trail and where each stands now.
function visitedCells() {
  const cells = new Set();
  const team = stateValue('team.visited');
  if (Array.isArray(team)) for (const p of team) if (Number.isInteger(p)) cells.add(p);
  for (const t of Object.values(M.trails)) for (const p of t) cells.add(p);
  const positions = stateValue('world.agent_positions');
  if (positions && typeof positions === 'object')
    for (const p of Object.values(positions)) if (Number.isInteger(p)) cells.add(p);
  return cells;
}

// Distinct object names the team has seen, of those the world holds (the
// broker's coverage counts the same, by name: a lamp seen once is found,
// wherever the other lamps are).
function objectsFound() {
  const objects = stateValue('world.objects');
  const explored = stateValue('world.explored_by_all');
  if (objects && typeof objects === 'object') {
    const all = new Set();
    for (const names of Object.values(objects)) for (const n of names || []) all.add(n);
    const seen = new Set(Array.isArray(explored) ? explored : []);
    let count = 0;
    for (const n of all) if (seen.has(n)) count++;
    if (all.size) return { found: count, total: all.size };
  }
  const w = (M.world && M.world.objects_total) ? M.world : M.info.world;
  if (w && w.objects_total) return { found: w.explored || 0, total: w.objects_total };
  return null;
}

function agentNames() {
  const names = new Set(M.agents.map((a) => a.agent));
  for (const n of Object.keys(M.trails)) names.add(n);
  for (const n of Object.keys(M.seen)) if (M.steps[n] !== undefined || M.seen[n].caps) names.add(n);
  return [...names].sort();
}

function color(name) {
  const names = agentNames();
  return COLORS[Math.max(0, names.indexOf(name)) % COLORS.length];
}

function renderHeader() {
  $('mode').textContent = M.info.mode === 'replay' ? 'replay' : (STATIC ? 'static' : 'live');
  $('source').textContent = M.info.mode === 'replay' ? (M.info.file || '') : (M.info.broker || '');
  const d = dims();
  const cells = visitedCells().size;
  $('cells').textContent = d ? `cells visited: ${cells}/${d.width * d.height}` +
                               ` (${Math.round(100 * cells / (d.width * d.height))} %)` : '';
  const o = objectsFound();
  $('objects').textContent = o ? `objects found: ${o.found}/${o.total}` : '';
}

function renderGrid() {
  const d = dims();
  $('world-panel').hidden = !d;
  const canvas = $('grid');
  const ctx = canvas.getContext('2d');
  if (!d) { ctx.clearRect(0, 0, canvas.width, canvas.height); return; }
  $('world-size').textContent = `${d.kind || ''} ${d.width}×${d.height}`;
  const cell = Math.max(4, Math.floor(Math.min(600 / d.width, (d.height === 1 ? 60 : 420) / d.height)));
  canvas.width = cell * d.width;
  canvas.height = cell * d.height;
  const objects = stateValue('world.objects') || {};
  const explored = new Set(stateValue('world.explored_by_all') || []);
  const visited = visitedCells();
  for (let p = 0; p < d.width * d.height; p++) {
    const x = p % d.width, y = Math.floor(p / d.width);
    const names = objects[String(p)] || [];
    //  Shaded only where an agent stood: a cell whose objects were all
    //  seen elsewhere (the same names) was not explored for that.
    ctx.fillStyle = visited.has(p) ? '#cfe8d2' : '#eef0f4';
    ctx.fillRect(x * cell, y * cell, cell - 1, cell - 1);
    if (names.length && cell >= 10) {
      for (let i = 0; i < names.length && i < 3; i++) {
        ctx.fillStyle = explored.has(names[i]) ? '#39424f' : '#b4bccb';
        ctx.fillRect(x * cell + 2 + i * 4, y * cell + cell - 5, 2, 2);
      }
    }
  }
  const center = (p) => [(p % d.width + 0.5) * cell, (Math.floor(p / d.width) + 0.5) * cell];
  for (const [agent, trail] of Object.entries(M.trails)) {
    ctx.strokeStyle = color(agent);
    ctx.globalAlpha = 0.5;
    ctx.lineWidth = Math.max(1, cell / 8);
    ctx.beginPath();
    trail.forEach((p, i) => { const [cx, cy] = center(p); if (i) ctx.lineTo(cx, cy); else ctx.moveTo(cx, cy); });
    ctx.stroke();
    ctx.globalAlpha = 1;
    const [cx, cy] = center(trail[trail.length - 1]);
    ctx.fillStyle = color(agent);
    ctx.beginPath();
    ctx.arc(cx, cy, Math.max(3, cell * 0.35), 0, 2 * Math.PI);
    ctx.fill();
  }
  $('legend').replaceChildren(...agentNames().map((n) => {
    const s = document.createElement('span');
    const i = document.createElement('i');
    i.style.background = color(n);
    s.append(i, n);
    return s;
  }));
}

function cellText(tr, text, cls) {
  const td = document.createElement('td');
  td.textContent = text === undefined || text === null ? '–' : String(text);
  if (cls) td.className = cls;
  tr.append(td);
  return td;
}

function renderAgents() {
  const byName = new Map(M.agents.map((a) => [a.agent, a]));
  const positions = stateValue('world.agent_positions') || {};
  const rows = agentNames().map((name) => {
    const a = byName.get(name) || {};
    const tr = document.createElement('tr');
    tr.dataset.agent = name;
    const first = cellText(tr, '');
    const swatch = document.createElement('span');
    swatch.className = 'dot';
    swatch.style.background = color(name);
    first.replaceChildren(swatch, ' ' + name);
    first.title = a.online ? 'online' : 'offline';
    if (!a.online) first.classList.add('offline');
    cellText(tr, (a.caps || (M.seen[name] || {}).caps || []).join(', '), 'caps');
    cellText(tr, positions[name]);
    cellText(tr, M.steps[name]);
    cellText(tr, M.actions[name]);
    cellText(tr, a.pending);
    const model = a.model || null;
    cellText(tr, model ? model.calls : (a.model_reported === false ? 0 : undefined));
    cellText(tr, model ? `${model.prompt_tokens}+${model.completion_tokens}` : undefined);
    return tr;
  });
  $('agents').tBodies[0].replaceChildren(...rows);
  $('agent-count').textContent = `${rows.length}`;
}

// The agents' model reports summed by role (the broker's STATS model_roles
// does the same; the page works from the AGENTS it already has).
function renderRoles() {
  const sums = new Map();
  for (const a of M.agents) {
    if (!a.model) continue;
    const cap = (a.caps || []).find((c) => c.startsWith('role:'));
    const role = cap ? cap.slice(5) : '-';
    const s = sums.get(role) || { agents: 0, calls: 0, ok: 0, failed: 0, retries: 0, tokens: 0, latency: 0 };
    s.agents += 1;
    s.calls += a.model.calls || 0;
    s.ok += a.model.ok || 0;
    s.failed += a.model.failed || 0;
    s.retries += a.model.retries || 0;
    s.tokens += (a.model.prompt_tokens || 0) + (a.model.completion_tokens || 0);
    s.latency += a.model.latency_ms || 0;
    sums.set(role, s);
  }
  $('roles-usage').hidden = sums.size === 0;
  const rows = [...sums.entries()].sort(([x], [y]) => x.localeCompare(y)).map(([role, s]) => {
    const tr = document.createElement('tr');
    tr.dataset.role = role;
    for (const v of [role, s.agents, s.calls, s.ok, s.failed, s.retries, s.tokens,
                     s.calls ? `${Math.round(s.latency / s.calls)} ms` : '–']) cellText(tr, v);
    return tr;
  });
  $('roles').tBodies[0].replaceChildren(...rows);
}

function msgMatches(m) {
  if (m.gap) return true;
  const agent = $('filter-agent').value;
  const channel = $('filter-channel').value;
  if (!$('filter-events').checked && m.dir === 'pub') return false;
  if (!$('filter-beats').checked && m.beat) return false;
  if (agent && m.agent !== agent && !(m.to || []).includes(agent)) return false;
  if (channel && !(m.to || []).includes(channel)) return false;
  return true;
}

function syncOptions(select, values) {
  const have = new Set([...select.options].map((o) => o.value));
  for (const v of values) if (!have.has(v)) select.add(new Option(v, v));
}

function renderTimeline() {
  syncOptions($('filter-agent'), agentNames());
  syncOptions($('filter-channel'), [...M.channels].sort());
  const shown = M.msgs.filter(msgMatches).slice(-SHOWN_MSGS);
  const rows = shown.reverse().map((m) => {
    const li = document.createElement('li');
    if (m.gap) { li.className = 'gap'; li.textContent = `-- dropped ${m.gap} frames`; return li; }
    li.dataset.tseq = m.tseq;
    if (m.tseq === selected) li.className = 'sel';
    const t = document.createElement('span'); t.className = 't'; t.textContent = (m.time || '').slice(11, 23) + ' ';
    const d = document.createElement('span'); d.className = 'dir-' + m.dir; d.textContent = (m.dir + '   ').slice(0, 4);
    const ty = document.createElement('span'); ty.className = 'ty'; ty.textContent = (m.type || '!' + m.error) + ' ';
    li.append(t, d, (m.peer || '') + ' ', ty, m.summary || '');
    return li;
  });
  $('timeline').replaceChildren(...rows);
  $('msg-count').textContent = `${M.msgs.length}` + (M.dropped ? `, ${M.dropped} dropped` : '');
}

function treeOf(state) {
  const root = {};
  for (const [key, entry] of Object.entries(state)) {
    const parts = key.split('.');
    let node = root;
    for (const p of parts.slice(0, -1)) node = node[p] && node[p].__children ? node[p].__children : ((node[p] = { __children: {} }).__children);
    const last = parts[parts.length - 1];
    node[last] = Object.assign(node[last] || {}, { __entry: entry, __key: key });
  }
  return root;
}

function valueNode(path, label, value, seq, fullKey) {
  if (value !== null && typeof value === 'object' && Object.keys(value).length) {
    const det = document.createElement('details');
    det.dataset.path = path;
    det.open = openPaths.has(path);
    det.addEventListener('toggle', () => { if (det.open) openPaths.add(path); else openPaths.delete(path); });
    const sum = document.createElement('summary');
    const k = document.createElement('span'); k.className = 'k'; k.textContent = label;
    sum.append(k, Array.isArray(value) ? ` [${value.length}]` : ` {${Object.keys(value).length}}`);
    if (seq !== undefined) { const s = document.createElement('span'); s.className = 'seq'; s.textContent = ` seq ${seq}`; sum.append(s); }
    if (fullKey && fullKey === M.flash) sum.classList.add('flash');
    det.append(sum);
    if (det.open) for (const [k2, v2] of Object.entries(value)) det.append(valueNode(path + '/' + k2, k2, v2));
    else det.addEventListener('toggle', () => { dirty = true; }, { once: true });
    return det;
  }
  const div = document.createElement('div');
  div.className = 'leaf';
  div.dataset.path = path;
  const k = document.createElement('span'); k.className = 'k'; k.textContent = label + ': ';
  div.append(k, JSON.stringify(value));
  if (seq !== undefined) { const s = document.createElement('span'); s.className = 'seq'; s.textContent = ` seq ${seq}`; div.append(s); }
  if (fullKey && fullKey === M.flash) div.classList.add('flash');
  return div;
}

function treeNodes(node, path) {
  return Object.keys(node).sort().map((name) => {
    const item = node[name];
    const p = path ? path + '.' + name : name;
    if (item.__entry && !item.__children) return valueNode(p, name, item.__entry.value, item.__entry.seq, item.__key);
    const det = document.createElement('details');
    det.dataset.path = p;
    det.open = openPaths.has(p);
    det.addEventListener('toggle', () => { if (det.open) openPaths.add(p); else openPaths.delete(p); dirty = true; });
    const sum = document.createElement('summary');
    const k = document.createElement('span'); k.className = 'k'; k.textContent = name;
    sum.append(k);
    det.append(sum);
    if (det.open) {
      if (item.__entry) det.append(valueNode(p + '/', '(value)', item.__entry.value, item.__entry.seq, item.__key));
      det.append(...treeNodes(item.__children, p));
    }
    return det;
  });
}

function renderState() {
  $('state').replaceChildren(...treeNodes(treeOf(M.state), ''));
  $('state-count').textContent = `${Object.keys(M.state).length} keys`;
}

function renderActions() {
  $('actions').hidden = !M.info.allow_actions;
}

function renderAll() {
  dirty = false;
  renderHeader(); renderGrid(); renderAgents(); renderRoles(); renderWorkflow(); renderTimeline(); renderState(); renderActions();
  M.flash = null;
}

function render() {
  if (dirty && M) renderAll();
  requestAnimationFrame(render);
}

// --- replay ------------------------------------------------------------------

function replayTo(index) {
  const info = M.info;
  M = emptyModel(info);
  for (let i = 0; i <= index && i < events.length; i++) apply(events[i][0], events[i][1]);
  const last = events[Math.min(index, events.length - 1)];
  $('replay-time').textContent = last && last[1].time ? last[1].time.replace('T', ' ') : '';
  dirty = true;
}

function setupReplay() {
  $('replay').hidden = false;
  const slider = $('slider');
  slider.max = String(Math.max(0, events.length - 1));
  slider.value = slider.max;
  slider.oninput = () => replayTo(Number(slider.value));
  replayTo(events.length - 1);
}

// --- the stream ----------------------------------------------------------------

function connect() {
  source = new EventSource('/events');
  const on = (name, fn) => source.addEventListener(name, (e) => fn(JSON.parse(e.data)));
  on('init', (d) => { events = []; apply('init', d); });
  for (const name of ['info', 'state', 'agents', 'msg', 'world', 'dropped', 'workflow', 'workflow_event']) {
    on(name, (d) => {
      if (M.info.mode === 'replay') events.push([name, d]);
      if (M.info.mode !== 'replay' || !replayEnded) apply(name, d);
    });
  }
  on('end', () => { replayEnded = true; setupReplay(); });
  on('reset', () => { source.close(); connect(); });
  source.onopen = () => { $('conn').textContent = 'connected'; $('conn').className = 'pill ok'; };
  source.onerror = () => { $('conn').textContent = 'reconnecting…'; $('conn').className = 'pill bad'; };
}

async function showFrame(tseq) {
  selected = tseq;
  dirty = true;
  const pre = $('frame');
  pre.hidden = false;
  const reply = await fetch('/api/frame/' + tseq);
  const body = await reply.json();
  pre.textContent = reply.ok ? JSON.stringify(body, null, 2) : body.error;
}

async function act(path, body) {
  const reply = await fetch('/api/actions/' + path, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  const result = await reply.json();
  $('action-result').textContent = reply.ok ? 'done' : result.error;
}

// ?static=1: the model once, drawn once, nothing left open.
async function showStatic() {
  const reply = await fetch('/api/model');
  apply('init', await reply.json());
  $('conn').textContent = 'snapshot';
  $('conn').className = 'pill ok';
  renderAll();
  document.documentElement.dataset.ready = '1';
}

window.addEventListener('DOMContentLoaded', () => {
  M = emptyModel();
  for (const id of ['filter-agent', 'filter-channel', 'filter-events', 'filter-beats'])
    $(id).addEventListener('change', () => { dirty = true; });
  $('timeline').addEventListener('click', (e) => {
    const li = e.target.closest('li');
    if (li && li.dataset.tseq) showFrame(Number(li.dataset.tseq));
  });
  $('reset-world').addEventListener('click', () => act('world-reset', {}));
  $('state-set').addEventListener('submit', (e) => {
    e.preventDefault();
    const raw = $('set-value').value;
    const value = /^-?\d+$/.test(raw) ? Number(raw) : raw;
    act('state-set', { key: $('set-key').value, value });
  });
  wfSetup();
  if (STATIC) {
    showStatic();
    return;
  }
  connect();
  requestAnimationFrame(render);
});
