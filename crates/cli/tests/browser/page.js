// Drives a `tack --ui` page in a real Chromium for crates/cli/tests/all/ui.rs.
// Usage: node page.js SCENARIO URL OUT_DIR
// Environment: TACK_PLAYWRIGHT (the playwright-core directory), TACK_CHROMIUM
// (the browser). Prints one JSON object on stdout.
'use strict';
const path = require('path');
const { chromium } = require(process.env.TACK_PLAYWRIGHT);

const [scenario, url, outDir] = process.argv.slice(2);

const card = (id) => `#cards .card[data-call-id="${id}"]`;

// The cards' HTML with the times (`+12 ms`, `after 3 ms`) left out: what a
// replay must render the same.
async function cardsHtml(page) {
  return page.$eval('#cards', (cards) => {
    const copy = cards.cloneNode(true);
    for (const time of copy.querySelectorAll('.t, .d')) time.textContent = 'T';
    return copy.innerHTML;
  });
}

async function answer(page, id, which) {
  const button = page.locator(`${card(id)} .prompt button.answer-${which}`);
  await button.waitFor();
  await button.click();
}

async function settled(page, id) {
  await page.locator(`${card(id)}.state-ok, ${card(id)}.state-err`).waitFor();
}

async function live(page) {
  const seen = {};
  // c3 waits for its approval: the batch before it is already on the page.
  await page.locator(`${card('c3')} .prompt button.answer-once`).waitFor();
  seen.status = await page.textContent('#status');
  seen.parallel = await page.$$eval('#cards .card.state-ok', (cards) => cards.map((c) => c.dataset.callId));
  seen.c3WhileAsked = await page.$eval(card('c3'), (c) => c.className);
  await page.screenshot({ path: path.join(outDir, 'ui-approval.png'), fullPage: true });
  await answer(page, 'c3', 'once');
  await settled(page, 'c3');
  await answer(page, 'c5', 'deny');
  await settled(page, 'c5');
  await answer(page, 'c6', 'session');
  await settled(page, 'c6');
  await settled(page, 'c7');
  await answer(page, 'c8', 'once');
  await page.locator('#cards .msg.turn-end').waitFor();
  await page.locator('body[data-status="ended"]').waitFor();
  const result = await common(page, seen);
  await page.screenshot({ path: path.join(outDir, 'ui-live.png'), fullPage: true });
  await page.locator('#timeline-pane').screenshot({ path: path.join(outDir, 'ui-timeline.png') });
  return result;
}

async function common(page, seen) {
  const text = (selector) => page.textContent(selector);
  return {
    ...seen,
    cards: await cardsHtml(page),
    timeline: await page.$eval('#timeline', (timeline) => timeline.innerHTML),
    pwned: await page.evaluate(() => window.pwned === 1),
    scripts: await page.$$eval('#cards script, #cards img', (found) => found.length),
    c1Title: await text(`${card('c1')} .title`),
    c3Out: await text(`${card('c3')} pre.out`),
    c3Exit: await text(`${card('c3')} .exit`),
    c4Status: await text(`${card('c4')} .status`),
    c4Error: await text(`${card('c4')} .error`),
    c4Provenance: await text(`${card('c4')} .provenance`),
    c5Status: await text(`${card('c5')} .status`),
    c5Approval: await text(`${card('c5')} .approval`),
    c6Diff: await page.$$eval(`${card('c6')} pre.diff span`, (lines) => lines.map((l) => `${l.className}:${l.textContent}`)),
    c6Approval: await text(`${card('c6')} .approval`),
    c7Approval: await page.$$eval(`${card('c7')} .approval`, (found) => found.length),
    calls: await page.$$eval('#timeline svg .call', (calls) => calls.length),
    waits: await page.$$eval('#timeline svg .wait', (waits) => waits.length),
    steps: await page.$$eval('#timeline svg .step', (steps) => steps.length),
  };
}

async function replay(page) {
  await page.locator('body[data-status="replay"]').waitFor();
  await page.locator('#cards .msg.turn-end').waitFor();
  return common(page, { status: await page.textContent('#status') });
}

async function close(page) {
  await page.locator(`${card('c1')} .prompt button.answer-once`).waitFor();
  return { asked: await page.$eval(card('c1'), (c) => c.className) };
}

async function nested(page) {
  const sub = '#cards .card[data-call-id^="c1:code:"]';
  // `run_code` is asked about first, then the call its program makes.
  await answer(page, 'c1', 'once');
  await page.locator(`${sub} .prompt button.answer-once`).click();
  await page.locator(`${sub}.state-ok`).waitFor();
  await page.locator('#cards .msg.turn-end').waitFor();
  return {
    cards: await page.$$eval('#cards .card', (cards) => cards.map((c) => c.dataset.callId)),
    subApproval: await page.textContent(`${sub} .approval`),
    subContent: await page.textContent(`${sub} pre.content`),
    parentNested: await page.textContent(`${card('c1')} ul.nested`),
  };
}

(async () => {
  const browser = await chromium.launch({
    executablePath: process.env.TACK_CHROMIUM,
    args: ['--no-sandbox'],
  });
  const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  const errors = [];
  page.on('pageerror', (error) => errors.push(String(error)));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  await page.goto(url);
  const run = { live, replay, close, nested }[scenario];
  const result = await run(page);
  result.errors = errors;
  await browser.close();
  process.stdout.write(JSON.stringify(result));
})().catch((error) => {
  console.error(error);
  process.exit(1);
});
