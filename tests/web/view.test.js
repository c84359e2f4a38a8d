/* SPDX-License-Identifier: MIT */
// view.test.js - parley-web in a real browser: Debian's chromium, headless,
// driven by puppeteer-core over the DevTools protocol (no browser download).
//
//   node tests/web/view.test.js URL SCREENSHOT.png [AGENTS [replay|workflow]]
//
// Opens URL (a parley-web serving a broker with AGENTS heuristic agents
// exploring, default 3), waits until the page shows that many agents and
// every object found, checks the header (cells visited and objects found,
// each for what it is), the grid, the timeline (and one full body), the
// state tree, saves a screenshot, and fails on any console error or page
// exception. Waits are event-driven (waitForFunction on the DOM) with
// generous deadlines. Exit 0: pass; 1: fail (the reason on stderr).
//
// With "replay", URL serves a recording (parley-web --replay): the page must
// end at the same three agents and every object found, show the time
// slider, and show fewer objects found when the slider is moved back.
//
// With "workflow", URL is a parley-web --allow-actions on the test loop
// scenario (tests/lib/testflow.c) whose worker handed the turn to the
// human reviewer and sent some HEARTBEATs: the panel must say "waiting for
// a person", list the checkpoints, show one's changes (old -> new) and a
// difference; the page then submits the person's turn (the run goes on to
// the checker), resumes from checkpoint 2 (back to the person), and the
// timeline shows HEARTBEATs only when asked.
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const puppeteer = require('puppeteer-core');

const [url, shot, agentsArg, mode] = process.argv.slice(2);
const replay = mode === 'replay';
const workflow = mode === 'workflow';
// "objects found: N/N": every object the world holds was seen.
const ALL_FOUND = /objects found: (\d+)\/\1$/;
const agents = Number(agentsArg || 3);
const chromium = process.env.PARLEY_CHROMIUM || '/usr/bin/chromium';
const DEADLINE_MS = Number(process.env.PARLEY_WEB_TEST_DEADLINE_MS || 45000);

async function main() {
  if (!url || !shot) throw new Error('usage: view.test.js URL SCREENSHOT.png [AGENTS]');
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-chromium-'));
  const errors = [];
  const browser = await puppeteer.launch({
    executablePath: chromium,
    headless: true,
    userDataDir: profile,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
           '--disable-component-update', '--disable-sync', '--no-first-run',
           '--disable-dev-shm-usage'],
  });
  try {
    const page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 900 });
    page.on('console', (msg) => { if (msg.type() === 'error') errors.push('console: ' + msg.text()); });
    page.on('pageerror', (err) => errors.push('page error: ' + err.message));
    page.on('requestfailed', (req) => {
      // The event stream is cut when the test ends; anything else is a failure.
      if (!req.url().endsWith('/events')) errors.push('request failed: ' + req.url());
    });
    await page.goto(url, { waitUntil: 'domcontentloaded', timeout: DEADLINE_MS });
    if (workflow) {
      await workflowPanel(page);
      await page.screenshot({ path: shot, fullPage: true });
      if (errors.length) throw new Error('browser errors:\n' + errors.join('\n'));
      console.log(`ok (workflow): list, show, diff, submit, resume; screenshot ${shot}`);
      return;
    }
    await page.waitForFunction((n, all) => {
      const rows = document.querySelectorAll('#agents tbody tr');
      return rows.length === n && new RegExp(all).test(document.getElementById('objects').textContent);
    }, { timeout: DEADLINE_MS, polling: 'mutation' }, agents, ALL_FOUND.source).catch(async (e) => {
      const text = await page.evaluate(() => document.body.innerText.slice(0, 2000));
      throw new Error(`the page never showed ${agents} agents and every object found: ${e.message}\n${text}`);
    });
    const view = await page.evaluate(() => ({
      agents: [...document.querySelectorAll('#agents tbody tr')].map((tr) => tr.dataset.agent),
      caps: [...document.querySelectorAll('#agents tbody td.caps')].map((td) => td.textContent),
      steps: [...document.querySelectorAll('#agents tbody tr')].map((tr) => tr.children[3].textContent),
      connected: document.getElementById('conn').textContent,
      cells: document.getElementById('cells').textContent,
      timeline: document.querySelectorAll('#timeline li').length,
      state: document.getElementById('state').textContent,
      grid: (() => { const c = document.getElementById('grid'); return [c.width, c.height]; })(),
    }));
    const fail = (why) => { throw new Error(why + ': ' + JSON.stringify(view)); };
    if (view.connected !== 'connected') fail('the event stream is not connected');
    if (replay && !/replay/.test(await page.$eval('#mode', (e) => e.textContent))) fail('not in replay mode');
    if (!view.agents.every((a) => /^Agent\d+$/.test(a))) fail('unexpected agent rows');
    if (!view.caps.every((c) => c.includes('explore'))) fail('roles (caps) missing');
    if (!view.steps.every((s) => /^\d+$/.test(s))) fail('steps missing');
    if (view.timeline < 10) fail('the timeline is (nearly) empty');
    if (!view.state.includes('world')) fail('the state tree has no world keys');
    if (view.grid[0] < 20) fail('the grid was not drawn');
    if (!/^cells visited: \d+\/\d+ \(\d+ %\)$/.test(view.cells)) fail('no count of cells visited');
    if (replay) {
      const slider = await page.evaluate(() => ({
        shown: !document.getElementById('replay').hidden,
        max: Number(document.getElementById('slider').max) }));
      if (!slider.shown || slider.max < 10) fail('no replay slider: ' + JSON.stringify(slider));
      // Back to the first event: the world as the recording began.
      await page.evaluate(() => {
        const s = document.getElementById('slider');
        s.value = '0';
        s.dispatchEvent(new Event('input'));
      });
      await page.waitForFunction((all) => !new RegExp(all).test(document.getElementById('objects').textContent),
                                 { timeout: DEADLINE_MS }, ALL_FOUND.source);
      await page.evaluate(() => {
        const s = document.getElementById('slider');
        s.value = s.max;
        s.dispatchEvent(new Event('input'));
      });
      await page.waitForFunction((all) => new RegExp(all).test(document.getElementById('objects').textContent),
                                 { timeout: DEADLINE_MS }, ALL_FOUND.source);
    }
    // A full body on demand: click a SEND and see its JSON.
    await page.select('#filter-agent', view.agents[0]);
    await page.waitForFunction(() => document.querySelectorAll('#timeline li[data-tseq]').length > 0,
                               { timeout: DEADLINE_MS });
    // The timeline is redrawn as events arrive: find and click in one step.
    await page.evaluate(() => document.querySelector('#timeline li[data-tseq]').click());
    await page.waitForFunction(() => /"msg"/.test(document.getElementById('frame').textContent),
                               { timeout: DEADLINE_MS });
    await page.select('#filter-agent', '');
    await page.screenshot({ path: shot, fullPage: false });
    if (errors.length) throw new Error('browser errors:\n' + errors.join('\n'));
    console.log(`ok${replay ? ' (replay)' : ''}: ${view.agents.length} agents, every object found, ` +
                `${view.timeline} timeline rows; screenshot ${shot}`);
  } finally {
    await browser.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
}

const text = (page, selector) => page.$eval(selector, (e) => e.innerText);

// The workflow panel against the loop scenario, paused at the reviewer's
// turn (checkpoints 0, 1, 2).
async function workflowPanel(page) {
  const wait = (fn, ...args) => page.waitForFunction(fn, { timeout: DEADLINE_MS }, ...args);
  const fail = async (why) => { throw new Error(why + ':\n' + (await text(page, 'body')).slice(0, 3000)); };
  await wait(() => !document.getElementById('wf-waiting').hidden
                   && document.querySelectorAll('#checkpoints tbody tr').length === 3)
    .catch(() => fail('no person\'s turn and three checkpoints'));
  if (!/^Waiting for a person: role reviewer holds turn 2/.test(await text(page, '#wf-waiting')))
    await fail('the person\'s turn is not said as such');
  if (/checkpoint list needs|not in this build/.test(await text(page, 'body'))) await fail('a stub');
  // Nobody but the worker is an agent: the page's own reads left nothing.
  const rows = await page.$$eval('#agents tbody tr', (t) => t.map((r) => r.dataset.agent));
  if (rows.join(',') !== 'W1') await fail('agents ' + rows.join(','));
  // Show checkpoint 2: what it changed, old and new.
  await page.evaluate(() => document.querySelector('#checkpoints tr[data-number="2"]').click());
  await wait(() => /What it changed since 1:/.test(document.getElementById('wf-detail').innerText))
    .catch(() => fail('checkpoint 2 not shown'));
  const shown = await text(page, '#wf-detail');
  if (!shown.includes('work: [] → ["draft"]') || !shown.includes('current_agent: "worker" → "reviewer"'))
    await fail('checkpoint 2\'s changes');
  // The difference from 0 to 2.
  await page.select('#diff-from', '0');
  await page.select('#diff-to', '2');
  await page.click('#diff-go');
  await wait(() => /From checkpoint 0 to 2/.test(document.getElementById('wf-detail').innerText))
    .catch(() => fail('no difference from 0 to 2'));
  if (!(await text(page, '#wf-detail')).includes('turn: 0 → 2')) await fail('the difference');
  // Heartbeats only when asked for.
  const beats = () => page.$$eval('#timeline li', (l) => l.filter((li) => / HEARTBEAT /.test(li.textContent)).length);
  if (await beats()) await fail('HEARTBEATs shown by default');
  await page.click('#filter-beats');
  await wait(() => [...document.querySelectorAll('#timeline li')].some((li) => / HEARTBEAT /.test(li.textContent)))
    .catch(() => fail('no HEARTBEAT when asked for'));
  await page.click('#filter-beats');
  // The person's turn, submitted from the page: the checker holds turn 3.
  await page.evaluate(() => {
    document.getElementById('wf-next').value = 'checker';
    document.getElementById('wf-ops').value = '[{"op":"update","key":"work","value":["reviewed"]}]';
  });
  await page.click('#wf-submit button[type=submit]');
  await wait(() => document.querySelectorAll('#checkpoints tbody tr').length === 4
                   && document.getElementById('wf-waiting').hidden)
    .catch(() => fail('the submitted turn did not show'));
  if (!/turn holder\s+checker/.test(await text(page, '#workflow-fields'))) await fail('not the checker\'s turn');
  // Resume from checkpoint 2: the person's turn again, three checkpoints.
  await page.evaluate(() => document.querySelector('#checkpoints tr[data-number="2"]').click());
  await page.click('#wf-resume');
  await wait(() => !document.getElementById('wf-waiting').hidden
                   && document.querySelectorAll('#checkpoints tbody tr').length === 3)
    .catch(() => fail('the resume did not show'));
  if (!/resume: done/.test(await text(page, '#wf-result'))) await fail('resume not done');
}

main().then(() => process.exit(0), (err) => { console.error('FAIL: ' + err.message); process.exit(1); });
