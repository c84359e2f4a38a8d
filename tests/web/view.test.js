/* SPDX-License-Identifier: MIT */
// view.test.js - parley-web in a real browser: Debian's chromium, headless,
// driven by puppeteer-core over the DevTools protocol (no browser download).
//
//   node tests/web/view.test.js URL SCREENSHOT.png [AGENTS [replay]]
//
// With "replay", URL serves a recording (parley-web --replay): the page must
// end at the same three agents and 100 % coverage, show the time slider,
// and show less coverage when the slider is moved back to the start.
//
// Opens URL (a parley-web serving a broker with AGENTS heuristic agents
// exploring, default 3), waits until the page shows that many agents and
// 100 % coverage, checks the grid, the timeline (and one full body), the
// state tree, saves a screenshot, and fails on any console error or page
// exception. Waits are event-driven (waitForFunction on the DOM) with
// generous deadlines. Exit 0: pass; 1: fail (the reason on stderr).
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const puppeteer = require('puppeteer-core');

const [url, shot, agentsArg, mode] = process.argv.slice(2);
const replay = mode === 'replay';
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
    await page.waitForFunction((n) => {
      const rows = document.querySelectorAll('#agents tbody tr');
      return rows.length === n && /coverage: 100 %/.test(document.getElementById('coverage').textContent);
    }, { timeout: DEADLINE_MS, polling: 'mutation' }, agents).catch(async (e) => {
      const text = await page.evaluate(() => document.body.innerText.slice(0, 2000));
      throw new Error(`the page never showed ${agents} agents and 100 % coverage: ${e.message}\n${text}`);
    });
    const view = await page.evaluate(() => ({
      agents: [...document.querySelectorAll('#agents tbody tr')].map((tr) => tr.dataset.agent),
      caps: [...document.querySelectorAll('#agents tbody td.caps')].map((td) => td.textContent),
      steps: [...document.querySelectorAll('#agents tbody tr')].map((tr) => tr.children[3].textContent),
      connected: document.getElementById('conn').textContent,
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
      await page.waitForFunction(() => !/coverage: 100 %/.test(document.getElementById('coverage').textContent),
                                 { timeout: DEADLINE_MS });
      await page.evaluate(() => {
        const s = document.getElementById('slider');
        s.value = s.max;
        s.dispatchEvent(new Event('input'));
      });
      await page.waitForFunction(() => /coverage: 100 %/.test(document.getElementById('coverage').textContent),
                                 { timeout: DEADLINE_MS });
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
    console.log(`ok${replay ? ' (replay)' : ''}: ${view.agents.length} agents, 100 % coverage, ` +
                `${view.timeline} timeline rows; screenshot ${shot}`);
  } finally {
    await browser.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
}

main().then(() => process.exit(0), (err) => { console.error('FAIL: ' + err.message); process.exit(1); });
