// The review page in a real browser: headless Chromium from Debian driven by
// playwright-core (no browser download). Started by tests/e2e/test_browser.cpp
// next to a running `kaicoder serve`, with:
//   KAI_URL        the sign-in address the terminal showed
//   KAI_BIN        the kaicoder binary (to propose while the list is open)
//   KAI_ARTIFACTS  where the screenshots go
// Prints one JSON line with what it saw; exits non-zero on the first failure.
'use strict';
const { chromium } = require('playwright-core');
const { execFileSync } = require('child_process');
const path = require('path');

function check(cond, what) {
  if (!cond) throw new Error('check failed: ' + what);
}

// What has focus, as one word a test can compare.
async function focused(page) {
  return page.evaluate(() => {
    const e = document.activeElement;
    if (!e || e === document.body) return 'body';
    if (e.id) return e.tagName.toLowerCase() + '#' + e.id;
    if (e.classList.contains('skip')) return 'skip';
    if (e.tagName === 'BUTTON') return 'button:' + e.textContent.trim();
    if (e.tagName === 'SUMMARY') return 'summary';
    if (e.tagName === 'A') return 'a:' + e.textContent.trim();
    return e.tagName.toLowerCase() + '.' + e.className;
  });
}

// The first `count` stops of Tab from the top of the page; from `start`
// (a selector, its own stop the first) when a click has moved where Tab
// begins.
async function tab_order(page, count, start) {
  const order = [];
  if (start) {
    await page.focus(start);
    order.push(await focused(page));
  } else {
    await page.evaluate(() => document.activeElement && document.activeElement.blur());
  }
  while (order.length < count) {
    await page.keyboard.press('Tab');
    order.push(await focused(page));
  }
  return order;
}

// Every control a person fills in has a label; every button a name.
async function unlabelled(page) {
  return page.evaluate(() => {
    const bad = [];
    for (const i of document.querySelectorAll('input:not([type=hidden]), textarea, select'))
      if (!i.labels || i.labels.length === 0) bad.push(i.name || i.id || i.outerHTML);
    for (const b of document.querySelectorAll('button'))
      if (!(b.getAttribute('aria-label') || b.textContent.trim())) bad.push(b.outerHTML);
    return bad;
  });
}

(async () => {
  const artifacts = process.env.KAI_ARTIFACTS;
  const browser = await chromium.launch({
    executablePath: process.env.KAI_CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu'],
    headless: true,
  });
  const seen = { csp_violations: [] };
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on('console', (m) => { if (/Content.Security.Policy|Refused to/i.test(m.text())) seen.csp_violations.push(m.text()); });

    await page.goto(process.env.KAI_URL);
    check(new URL(page.url()).pathname === '/', 'sign-in lands on the list, got ' + page.url());
    check(!page.url().includes('token'), 'the token left the address bar');
    check((await page.textContent('h1')) === 'Proposals', 'the list heading');
    const cookies = await page.context().cookies();
    check(cookies.length === 1 && cookies[0].httpOnly && cookies[0].sameSite === 'Strict', 'one HttpOnly SameSite=Strict cookie');
    await page.screenshot({ path: path.join(artifacts, 'list.png'), fullPage: true });
    seen.list_unlabelled = await unlabelled(page);
    check(seen.list_unlabelled.length === 0, 'labels on the list: ' + seen.list_unlabelled);
    seen.list_focus = await tab_order(page, 3);
    check(seen.list_focus[0] === 'skip' && seen.list_focus[1] === 'a:Proposals' && seen.list_focus[2] === 'a:Changelog',
          'focus order on the list: ' + seen.list_focus);

    // A proposal made while the list is open shows up without a reload.
    execFileSync(process.env.KAI_BIN, ['propose', '--path', 'c.txt', '--content-file', '-', '--why', 'late'], { input: 'c\n' });
    await page.waitForSelector('a[href="/p/4"]', { timeout: 15000 });
    seen.live_update = true;

    await page.click('a[href="/p/1"] >> nth=0');
    check((await page.textContent('h1')).startsWith('Proposal 1'), 'the proposal page');
    check(await page.isVisible('.diff .add'), 'the diff is shown in colour');
    await page.screenshot({ path: path.join(artifacts, 'proposal.png'), fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: path.join(artifacts, 'proposal-phone.png'), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 900 });
    seen.proposal_unlabelled = await unlabelled(page);
    check(seen.proposal_unlabelled.length === 0, 'labels on the proposal: ' + seen.proposal_unlabelled);
    seen.proposal_focus = await tab_order(page, 8);
    const want = ['skip', 'a:Proposals', 'a:Changelog', 'div.diff', 'button:Approve and apply',
                  'button:Approve only (apply later)', 'input#reason', 'button:Reject'];
    check(JSON.stringify(seen.proposal_focus) === JSON.stringify(want), 'focus order on the proposal: ' + seen.proposal_focus);

    await page.click('button.approve');
    check((await page.textContent('h1')) === 'Proposal 1 approved', 'approved: ' + (await page.textContent('main')));

    await page.goto(new URL('/p/2', page.url()).href);
    await page.fill('#reason', 'not this one');
    await page.click('button.reject');
    check((await page.textContent('h1')) === 'Proposal 2 rejected', 'rejected: ' + (await page.textContent('main')));

    // A changeset: its diffstat first, then one collapsed diff a file; open one, then approve the whole.
    await page.goto(new URL('/p/3', page.url()).href);
    check((await page.textContent('h1')).startsWith('Proposal 3 \u00b7 changeset'), 'the changeset page');
    check(await page.isVisible('table.diffstat'), 'the diffstat is shown');
    seen.changeset_files = await page.locator('details.file').count();
    check(seen.changeset_files === 3, 'one collapsible diff a file: ' + seen.changeset_files);
    const first = page.locator('details.file').nth(0);
    check(!(await first.locator('.diff').isVisible()), 'a file\'s diff starts collapsed');
    await first.locator('summary').click();
    check(await first.locator('.diff .add').isVisible(), 'the opened file\'s diff is shown in colour');
    await page.screenshot({ path: path.join(artifacts, 'changeset.png'), fullPage: true });
    seen.changeset_unlabelled = await unlabelled(page);
    check(seen.changeset_unlabelled.length === 0, 'labels on the changeset: ' + seen.changeset_unlabelled);
    seen.changeset_focus = await tab_order(page, 11, 'a.skip');
    const want_cs = ['skip', 'a:Proposals', 'a:Changelog', 'summary', 'div.diff', 'summary', 'summary',
                     'button:Approve and apply', 'button:Approve only (apply later)', 'input#reason', 'button:Reject'];
    check(JSON.stringify(seen.changeset_focus) === JSON.stringify(want_cs), 'focus order on the changeset: ' + seen.changeset_focus);
    await page.click('button.approve');
    check((await page.textContent('h1')) === 'Proposal 3 approved', 'changeset approved: ' + (await page.textContent('main')));
    check(seen.csp_violations.length === 0, 'no CSP violation: ' + seen.csp_violations);
    seen.ok = true;
  } finally {
    await browser.close();
  }
  console.log(JSON.stringify(seen));
})().catch((e) => {
  console.error(e.stack || String(e));
  process.exit(1);
});
