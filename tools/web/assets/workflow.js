/* SPDX-License-Identifier: MIT */
// workflow.js - parley-web's workflow panel: where the turn is (a person's
// turn says "waiting for a person"), the checkpoints, one checkpoint's state
// and what it changed, the difference between two, and with --allow-actions
// a resume and a person's turn.
//
// The overview (WORKFLOW and CHECKPOINTS) comes with the model (M.workflow):
// parley-web reads it again after every WORKFLOW_EVENT and sends it to every
// page. A checkpoint's state and a difference are asked for when clicked
// (GET /api/workflow/checkpoint/N, /api/workflow/diff/N/M), the documents
// parley-ctl --json prints. A replay has no broker to ask: its list is the
// recorded WORKFLOW_EVENTs (M.wfEvents).
'use strict';

// Workflow keys (the broker's defaults; a scenario may rename them).
const WORKFLOW_KEYS = { holder: 'current_agent', status: 'workflow_status',
                        revisions: 'iteration_count', turn: 'turn' };
const WF = { selected: null, listed: '', options: '', submitting: false };

function wfText(value, cut) {
  const text = JSON.stringify(value);
  return text.length > cut ? text.slice(0, cut - 1) + '…' : text;
}

// [{key, reducer, old, new}] as a list: "key: old → new".
function wfChanges(entries) {
  const ul = document.createElement('ul');
  ul.className = 'changes';
  for (const e of entries) {
    const li = document.createElement('li');
    const k = document.createElement('span'); k.className = 'k'; k.textContent = e.key;
    const old = document.createElement('span'); old.className = 'old';
    old.textContent = 'old' in e ? wfText(e.old, 200) : '(absent)';
    const now = document.createElement('span'); now.className = 'new';
    now.textContent = 'new' in e ? wfText(e.new, 200) : '(removed)';
    li.append(k, ': ', old, ' → ', now);
    ul.append(li);
  }
  if (!entries.length) { const li = document.createElement('li'); li.textContent = 'no key differs'; ul.append(li); }
  return ul;
}

// A checkpoint's entries [{key, reducer, value}] as "key (reducer) = value".
function wfEntries(entries) {
  const ul = document.createElement('ul');
  ul.className = 'changes';
  for (const e of entries.filter((x) => !x.removed)) {
    const li = document.createElement('li');
    const k = document.createElement('span'); k.className = 'k'; k.textContent = e.key;
    li.append(k, ` (${e.reducer}) = `, wfText(e.value === undefined ? null : e.value, 200));
    ul.append(li);
  }
  return ul;
}

function wfHeading(text) {
  const h = document.createElement('h4');
  h.textContent = text;
  return h;
}

function wfDetail(...nodes) {
  const detail = document.getElementById('wf-detail');
  detail.className = '';
  detail.replaceChildren(...nodes);
}

async function wfGet(path) {
  const reply = await fetch('/api/workflow/' + path);
  const body = await reply.json();
  if (!reply.ok) throw new Error(body.error || reply.statusText);
  return body;
}

async function wfShow(number) {
  WF.selected = number;
  WF.listed = '';
  dirty = true;
  if (M.info.mode === 'replay') {
    wfDetail(document.createTextNode(`Checkpoint ${number}: a recording holds the turns, not ` +
      'the checkpoints\' states; run parley-web against the broker, or parley-ctl show ' + number + '.'));
    return;
  }
  try {
    const cp = await wfGet('checkpoint/' + number);
    const i = cp.checkpoint;
    const nodes = [wfHeading(`Checkpoint ${i.number}: turn ${i.turn}, ${i.status}, ` +
                             `holder ${i.holder || '–'}, revisions ${i.revisions}`)];
    if (cp.changes) nodes.push(document.createTextNode(`What it changed since ${cp.changes.from}:`),
                               wfChanges(cp.changes.entries));
    const state = document.createElement('details');
    const sum = document.createElement('summary');
    sum.textContent = `the shared state at ${i.number} (${cp.entries.length} keys)`;
    state.append(sum, wfEntries(cp.entries));
    nodes.push(state);
    wfDetail(...nodes);
  } catch (e) {
    wfDetail(document.createTextNode(`checkpoint ${number}: ${e.message}`));
  }
}

async function wfDiff() {
  const from = document.getElementById('diff-from').value;
  const to = document.getElementById('diff-to').value;
  if (from === '' || to === '') return;
  try {
    const diff = await wfGet(`diff/${from}/${to}`);
    wfDetail(wfHeading(`From checkpoint ${diff.from} to ${diff.to}`), wfChanges(diff.entries));
  } catch (e) {
    wfDetail(document.createTextNode(`diff ${from} → ${to}: ${e.message}`));
  }
}

async function wfAct(path, body) {
  const result = document.getElementById('wf-result');
  result.textContent = '…';
  const reply = await fetch('/api/actions/' + path, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  const answer = await reply.json();
  result.textContent = reply.ok ? `${path}: done` : `${path}: ${answer.error}`;
  return reply.ok;
}

async function wfSubmit(e) {
  e.preventDefault();
  let ops;
  try {
    ops = JSON.parse(document.getElementById('wf-ops').value || '[]');
  } catch (err) {
    document.getElementById('wf-result').textContent = 'the state updates are not JSON: ' + err.message;
    return;
  }
  const info = (M.workflow || {}).info || {};
  const next = document.getElementById('wf-next').value.trim();
  const status = document.getElementById('wf-status').value;
  const reason = document.getElementById('wf-reason').value.trim();
  const body = { role: info.holder, next: next || null, ops };
  if (status) body.status = status;
  if (reason) body.reason = reason;
  if (await wfAct('submit', body))
    for (const [id, empty] of [['wf-ops', '[]'], ['wf-next', ''], ['wf-reason', '']]) document.getElementById(id).value = empty;
}

function wfSetup() {
  document.getElementById('diff-go').addEventListener('click', wfDiff);
  document.getElementById('wf-resume').addEventListener('click', () => {
    if (WF.selected !== null) wfAct('resume', { checkpoint: WF.selected });
  });
  document.getElementById('wf-submit').addEventListener('submit', wfSubmit);
  document.querySelector('#checkpoints tbody').addEventListener('click', (e) => {
    const tr = e.target.closest('tr');
    if (tr && tr.dataset.number !== undefined) wfShow(Number(tr.dataset.number));
  });
}

// The rows: the broker's checkpoints, or in a replay the recorded events.
function wfRows() {
  const wf = M.workflow;
  if (wf && wf.checkpoints) return wf.checkpoints;
  return (M.wfEvents || []).filter((e) => e.checkpoint !== undefined)
    .map((e) => ({ number: e.checkpoint, turn: e.turn, status: e.status, holder: e.holder,
                   revisions: e.revisions, event: e.event }));
}

function wfFields(info) {
  const items = [];
  const add = (label, text) => {
    const dt = document.createElement('dt'); dt.textContent = label;
    const dd = document.createElement('dd'); dd.textContent = text;
    items.push(dt, dd);
  };
  if (info) {
    add('status', info.status);
    add('turn holder', (info.holder || '–') + (info.paused ? ' (a person)' : info.agent ? ` (agent ${info.agent})` : ''));
    add('turn', info.max_turns ? `${info.turn} of at most ${info.max_turns}` : info.turn);
    add('revisions', info.max_revisions ? `${info.revisions} of at most ${info.max_revisions}` : info.revisions);
    if (info.reason) add('reason', info.reason);
  } else {
    for (const [label, key] of Object.entries(WORKFLOW_KEYS))
      if (key in M.state) add(label === 'holder' ? 'turn holder' : label, JSON.stringify(M.state[key].value));
  }
  document.getElementById('workflow-fields').replaceChildren(...items);
}

function wfList(rows) {
  const key = JSON.stringify(rows) + '|' + WF.selected;
  if (key === WF.listed) return;
  WF.listed = key;
  const trs = rows.map((cp) => {
    const tr = document.createElement('tr');
    tr.dataset.number = cp.number;
    if (cp.number === WF.selected) tr.className = 'sel';
    for (const v of [cp.number, cp.turn, cp.status, cp.holder || '–', cp.revisions,
                     cp.changed !== undefined ? `${cp.changed} keys` : cp.event || '']) {
      const td = document.createElement('td');
      td.textContent = v === undefined ? '–' : String(v);
      tr.append(td);
    }
    return tr;
  });
  document.querySelector('#checkpoints tbody').replaceChildren(...trs);
  const numbers = rows.map((cp) => String(cp.number)).join(',');
  if (numbers !== WF.options) {
    WF.options = numbers;
    for (const [id, pick] of [['diff-from', rows.length - 2], ['diff-to', rows.length - 1]]) {
      const select = document.getElementById(id);
      const keep = select.value;
      select.replaceChildren(...rows.map((cp) => new Option(String(cp.number), String(cp.number))));
      select.value = rows.some((cp) => String(cp.number) === keep) ? keep
                   : String((rows[Math.max(0, pick)] || {}).number);
    }
  }
}

function renderWorkflow() {
  const wf = M.workflow;
  const keyed = Object.values(WORKFLOW_KEYS).some((key) => key in M.state);
  const shown = (wf && !wf.none) || (!wf && keyed) || (M.wfEvents || []).length > 0;
  document.getElementById('workflow').hidden = !shown;
  if (!shown) return;
  const info = wf && wf.info;
  const error = document.getElementById('wf-error');
  error.hidden = !(wf && wf.error);
  error.textContent = wf && wf.error ? `The workflow could not be read: ${wf.error}` : '';
  wfFields(info);
  const rows = wfRows();
  wfList(rows);
  document.getElementById('wf-count').textContent =
    `${rows.length}` + (wf && wf.dropped ? `, ${wf.dropped} older folded away` : '');
  document.getElementById('wf-summary').textContent = info ? `${info.status}, turn ${info.turn}` : '';
  const waiting = info && info.paused && info.status !== 'done' && info.status !== 'failed';
  const banner = document.getElementById('wf-waiting');
  banner.hidden = !waiting;
  if (waiting)
    banner.textContent = `Waiting for a person: role ${info.holder} holds turn ${info.turn}. ` +
      (M.info.allow_actions ? 'Submit the turn below.'
        : `Submit it with parley-ctl --role ${info.holder} submit NEXT [OP KEY JSON]..., ` +
          'or start parley-web with --allow-actions.');
  const live = M.info.mode !== 'replay';
  document.querySelector('#workflow .wf-tools').hidden = !live;
  document.getElementById('wf-actions').hidden = !(live && M.info.allow_actions);
  document.getElementById('wf-resume').disabled = WF.selected === null;
  document.getElementById('wf-submit').hidden = !waiting;
  document.getElementById('wf-role').textContent = waiting ? info.holder : '';
}
