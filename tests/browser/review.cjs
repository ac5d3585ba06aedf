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

    // Risk and tier side by side, each under its own column.
    seen.list_columns = await page.$$eval('table.proposals thead th', (ths) => ths.map((t) => t.textContent));
    check(seen.list_columns.includes('Risk') && seen.list_columns.includes('Tier'), 'risk and tier columns: ' + seen.list_columns);

    // On a phone the rows become stacks of cells, each still named by its column.
    await page.setViewportSize({ width: 390, height: 844 });
    seen.phone_labels = await page.evaluate(() => {
      const row = document.querySelector('table.proposals tbody tr');
      return Array.from(row.querySelectorAll('td')).map((td) => {
        const before = getComputedStyle(td, '::before');
        return { label: before.content, shown: before.display !== 'none' && td.getBoundingClientRect().width > 0 };
      });
    });
    check(!(await page.isVisible('table.proposals thead')), 'the header row is hidden at 390 px');
    const labels = seen.phone_labels.map((c) => c.label);
    for (const want of ['"#"', '"Status"', '"Kind"', '"Path or command"', '"Risk"', '"Tier"', '"Age"', '"Time left"', '"Proposer"'])
      check(labels.includes(want), 'label ' + want + ' at 390 px: ' + labels);
    check(seen.phone_labels.every((c) => c.shown), 'every label shown at 390 px');
    check(await page.evaluate(() => document.documentElement.scrollWidth <= 390), 'no sideways scrolling at 390 px');
    await page.screenshot({ path: path.join(artifacts, 'list-phone.png'), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 900 });

    // A proposal made while the list is open shows up without a reload.
    execFileSync(process.env.KAI_BIN, ['propose', '--path', 'c.txt', '--content-file', '-', '--why', 'late'], { input: 'c\n' });
    await page.waitForSelector('a[href="/p/6"]', { timeout: 15000 });
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
    // "Always allow this": the terminal's `a`, its rule shown before it is written.
    check(await page.isVisible('#always'), 'always allow is offered for an edit of a normal file');
    check((await page.textContent('pre.rule')).includes('path = "/a.txt"'), 'the rule is shown whole');
    seen.proposal_focus = await tab_order(page, 9);
    const want = ['skip', 'a:Proposals', 'a:Changelog', 'div.diff', 'button:Approve and apply',
                  'button:Approve only (apply later)', 'button:Approve and always allow', 'input#reason', 'button:Reject'];
    check(JSON.stringify(seen.proposal_focus) === JSON.stringify(want), 'focus order on the proposal: ' + seen.proposal_focus);

    await page.click('button.approve');
    check((await page.textContent('h1')) === 'Proposal 1 approved', 'approved: ' + (await page.textContent('main')));

    await page.goto(new URL('/p/2', page.url()).href);
    await page.fill('#reason', 'not this one');
    await page.click('button.reject');
    check((await page.textContent('h1')) === 'Proposal 2 rejected', 'rejected: ' + (await page.textContent('main')));

    // A confirm-tier run (it asks for the network): no "always allow".
    await page.goto(new URL('/p/4', page.url()).href);
    check((await page.textContent('h1')).startsWith('Proposal 4 \u00b7 run'), 'the run page');
    check(await page.isVisible('#confirm'), 'the confirm tier asks for CONFIRM');
    check((await page.locator('#always').count()) === 0 && (await page.locator('button.always').count()) === 0,
          'always allow is never offered for the confirm tier');
    await page.screenshot({ path: path.join(artifacts, 'run-confirm.png'), fullPage: true });

    // A short changeset: its file table first, then every file's diff open at once, Approve enabled.
    await page.goto(new URL('/p/3', page.url()).href);
    check((await page.textContent('h1')).startsWith('Proposal 3 \u00b7 changeset'), 'the changeset page');
    check(await page.isVisible('table.diffstat'), 'the file table is shown');
    seen.changeset_columns = await page.$$eval('table.diffstat thead th', (ths) => ths.map((t) => t.textContent));
    check(JSON.stringify(seen.changeset_columns) === JSON.stringify(['Operation', 'File', 'Lines', 'Risk', 'Tier', 'Policy']),
          'the file table\'s columns: ' + seen.changeset_columns);
    check((await page.locator('table.diffstat tbody tr').count()) === 3, 'one row a file');
    const radius = await page.textContent('dl.facts');
    check(['x.txt', 'y.txt', 'w.txt'].every((f) => radius.includes(f)), 'the summary names every file: ' + radius);
    seen.changeset_files = await page.locator('details.file').count();
    check(seen.changeset_files === 3, 'one diff section a file: ' + seen.changeset_files);
    check((await page.locator('details.file[open]').count()) === 3, 'a short changeset opens every file\'s diff');
    const first = page.locator('details.file').nth(0);
    check(await first.locator('.diff .add').isVisible(), 'the file\'s diff is shown in colour');
    check(await page.isEnabled('button.approve'), 'Approve is enabled at once for a short changeset');
    await page.screenshot({ path: path.join(artifacts, 'changeset.png'), fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    check(!(await page.isVisible('table.diffstat thead')), 'the file table\'s header row is hidden at 390 px');
    seen.changeset_phone_labels = await page.$$eval('table.diffstat tbody tr:first-child td',
      (tds) => tds.map((td) => getComputedStyle(td, '::before').content));
    check(JSON.stringify(seen.changeset_phone_labels) ===
          JSON.stringify(['"Operation"', '"File"', '"Lines"', '"Risk"', '"Tier"', '"Policy"']),
          'the file table keeps its labels at 390 px: ' + seen.changeset_phone_labels);
    await page.screenshot({ path: path.join(artifacts, 'changeset-phone.png'), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 900 });
    seen.changeset_unlabelled = await unlabelled(page);
    check(seen.changeset_unlabelled.length === 0, 'labels on the changeset: ' + seen.changeset_unlabelled);
    seen.changeset_focus = await tab_order(page, 13, 'a.skip');
    const want_cs = ['skip', 'a:Proposals', 'a:Changelog', 'summary', 'div.diff', 'summary', 'div.diff', 'summary',
                     'div.diff', 'button:Approve and apply', 'button:Approve only (apply later)', 'input#reason',
                     'button:Reject'];
    check(JSON.stringify(seen.changeset_focus) === JSON.stringify(want_cs), 'focus order on the changeset: ' + seen.changeset_focus);
    await page.click('button.approve');
    check((await page.textContent('h1')) === 'Proposal 3 approved', 'changeset approved: ' + (await page.textContent('main')));

    // A long changeset: every file starts closed; Approve stays disabled
    // until each file's diff has been opened, or CONFIRM is typed.
    for (const width of [390, 1280]) {
      await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
      await page.goto(new URL('/p/5', page.url()).href);
      check((await page.locator('details.file').count()) === 2, 'two files in the long changeset');
      check((await page.locator('details.file[open]').count()) === 0, 'a long changeset starts with every file closed');
      check(await page.isDisabled('button.approve') && await page.isDisabled('button.later'),
            'Approve is disabled before the diffs are opened at ' + width);
      check(await page.isEnabled('button.reject'), 'Reject is not held back');
      // The details' toggle event comes as a task of its own: wait for the count to move.
      await page.locator('details.file summary').nth(0).click();
      await page.waitForFunction(() => document.getElementById('opened-count').textContent === '1 of 2 opened',
                                 null, { timeout: 5000 });
      check(await page.isDisabled('button.approve'), 'one file of two opened: still disabled at ' + width);
      if (width === 390) {
        // CONFIRM typed out instead of opening the rest, as the terminal asks for a cut diff.
        await page.fill('#confirm', 'CONFIRM');
        check(await page.isEnabled('button.approve'), 'CONFIRM enables Approve');
        await page.fill('#confirm', '');
        check(await page.isDisabled('button.approve'), 'without CONFIRM it is disabled again');
        await page.screenshot({ path: path.join(artifacts, 'changeset-long-phone.png'), fullPage: true });
      } else {
        await page.screenshot({ path: path.join(artifacts, 'changeset-long.png'), fullPage: true });
      }
      await page.locator('details.file summary').nth(1).click();
      await page.waitForFunction(() => document.getElementById('opened-count').textContent === '2 of 2 opened',
                                 null, { timeout: 5000 });
      check(await page.isEnabled('button.approve'), 'every file opened: Approve enabled at ' + width);
    }
    await page.click('button.approve');
    check((await page.textContent('h1')) === 'Proposal 5 approved', 'long changeset approved: ' + (await page.textContent('main')));
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
