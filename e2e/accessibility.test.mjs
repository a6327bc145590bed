// The explorer page for keyboard and screen-reader users, in Debian's Chromium against the real
// binary (started with its own sample data, so these tests do not depend on browser.test.mjs):
//
// - axe-core (WCAG 2.1 A and AA, and its best practices) finds no violation in the page's main
//   states, at 1280 and 390 px wide, in the light and the dark theme, and the border of every
//   control has 3:1 contrast against what surrounds it (WCAG 1.4.11, which axe does not check).
// - A person with only a keyboard can do everything, and after every step the focus is where
//   they would expect it, visible, and never lost to <body>.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { chromium } from 'playwright-core';
import { LAUNCH, otherClient, row, rows, steps, waitForList, watch } from './chromium.mjs';
import { WRITE_TOKEN, startService } from './services.mjs';

const AXE_SOURCE = await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'];

let browser;
let service;
let BASE_URL;

// failAt makes the page's requests to this exact path fail with no answer, as when the server has
// stopped, until the returned function is called.
async function failAt(page, path) {
  const matches = (url) => url.href === BASE_URL + path;
  await page.route(matches, (route) => route.abort('connectionrefused'));
  return () => page.unroute(matches);
}

before(async () => {
  // A short -delay keeps each request in flight long enough to check the focus meanwhile.
  service = await startService(['-delay', '300ms']);
  BASE_URL = service.url;
  browser = await chromium.launch(LAUNCH);
});

after(async () => {
  await browser?.close();
  await service?.stop();
});

// ---------------------------------------------------------------------------------------------
// axe, and the contrast of control borders

// axeViolations runs axe-core in the page and describes each violation in a line. The page's CSP
// allows scripts from its own origin only, so axe cannot come in by a <script> tag; evaluating
// its source through the DevTools protocol, as a browser extension would, is outside the page's
// CSP (which stays as strict as it is served) and adds nothing to the page but the axe global.
async function axeViolations(page) {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE);
  const { violations } = await page.evaluate((tags) =>
    window.axe.run(document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] }), AXE_TAGS);
  return violations.map((v) => `${v.id} (${v.impact}): ${v.help}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

// weakBorders lists each visible, enabled input, select or button whose border has less than 3:1
// contrast against the background around it. A button with no border (a "ghost" one) is named
// by its text alone, and has no boundary to measure.
function weakBorders(page) {
  return page.evaluate(() => {
    const rgba = (color) => (color.match(/[\d.]+/g) || []).map(Number);
    const luminance = ([r, g, b]) => {
      const [R, G, B] = [r, g, b].map((v) => v / 255).map((v) => (v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4));
      return 0.2126 * R + 0.7152 * G + 0.0722 * B;
    };
    const ratio = (a, b) => {
      const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
      return (hi + 0.05) / (lo + 0.05);
    };
    const around = (node) => {
      for (let n = node.parentElement; n; n = n.parentElement) {
        const color = rgba(getComputedStyle(n).backgroundColor);
        if (color.length === 3 || color[3] > 0) return color;
      }
      return [255, 255, 255];
    };
    const weak = {}; // each weak pair of colours: the controls that have it
    for (const control of document.querySelectorAll('input:not([type="checkbox"]), select, button')) {
      if (!control.checkVisibility() || control.disabled || control.getAttribute('aria-disabled') === 'true') continue;
      const style = getComputedStyle(control);
      const border = rgba(style.borderTopColor);
      if (parseFloat(style.borderTopWidth) === 0 || border[3] === 0) continue;
      const contrast = ratio(border, around(control));
      if (contrast >= 3) continue;
      const pair = `${style.borderTopColor} on rgb(${around(control).slice(0, 3).join(', ')}) is ${contrast.toFixed(2)}:1`;
      (weak[pair] ||= []).push(control.id || control.textContent.trim());
    }
    return Object.entries(weak).map(([pair, controls]) => `${pair}: ${controls.join(', ')}`);
  });
}

const LAYOUTS = {
  '1280 px': { viewport: { width: 1280, height: 860 } },
  '390 px': { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true },
};

let scans = 0; // each run changes Alan Turing's e-mail, to a new address
for (const [width, layout] of Object.entries(LAYOUTS)) {
  for (const colorScheme of ['light', 'dark']) {
    test(`axe finds no violation in the main states, ${width} wide, ${colorScheme} theme`, async () => {
      const { page, expect, close } = await watch(browser, BASE_URL, { ...layout, colorScheme });
      const found = {}; // each state: what axe, and the border check, found there
      const scan = async (state) => {
        found[state] = [...await axeViolations(page), ...(await weakBorders(page)).map((b) => `border contrast below 3:1: ${b}`)];
      };
      const form = page.locator('#user-form');

      await page.goto(BASE_URL + '/');
      await page.getByText('Enter a token to see the users.').waitFor();
      assert.ok(await page.evaluate((scheme) => matchMedia(`(prefers-color-scheme: ${scheme})`).matches, colorScheme));
      await scan('no token');

      await page.getByLabel('Bearer token').fill(WRITE_TOKEN);
      await page.getByRole('button', { name: 'Use token' }).click();
      await row(page, 'Alan Turing').waitFor();
      await waitForList(page);
      // Indented, the list's JSON is taller than the response's box: that box must scroll by keyboard.
      await page.getByLabel('Indent JSON').check();
      await scan('listed');

      await row(page, 'Alan Turing').getByRole('button', { name: 'Edit Alan Turing' }).click();
      await page.getByRole('heading', { name: 'Edit Alan Turing' }).waitFor();
      await scan('edit form open');

      // A PUT's answer has no ETag: the page reads the user again, and says why in the log.
      await page.getByRole('button', { name: 'Replace (PUT)' }).click();
      await page.getByText(/^Saved with PUT\. Its answer carries no ETag/).waitFor();
      await waitForList(page);
      await scan('after a PUT, the user read again for its ETag');

      expect(400, 'PATCH', '/api/users/2');
      await form.getByLabel('Name').fill(' ');
      await form.getByLabel('E-mail').fill('not an address');
      await page.getByRole('button', { name: 'Save changes (PATCH)' }).click();
      await page.locator('#email-error').getByText('email must be a plain address').waitFor();
      await scan('400 field errors');

      expect(412, 'PATCH', '/api/users/2');
      const theirs = await otherClient(BASE_URL, 'PATCH', '/api/users/2', { email: `alan.${++scans}@example.com` }, 'application/merge-patch+json');
      assert.equal(theirs.status, 200);
      await form.getByLabel('Name').fill('Alan M. Turing');
      await form.getByLabel('E-mail').fill('alan@example.com');
      await page.getByRole('button', { name: 'Save changes (PATCH)' }).click();
      await page.getByText('412 Precondition Failed: someone else changed this user').waitFor();
      await scan('412 alert');

      await page.getByRole('button', { name: 'Reload the user' }).click();
      await page.getByText(/^Reloaded: the user had changed/).waitFor();
      await page.getByRole('button', { name: 'Delete…' }).click();
      await page.getByText(/Delete Alan Turing \(id 2\)\?/).waitFor();
      await scan('delete confirmation');
      await page.getByRole('button', { name: 'Keep' }).click();

      // The next page's request fails with no answer, as when the server has stopped.
      const next = '/api/users?page=2&per_page=10';
      expect(0, 'GET', next);
      const answerAgain = await failAt(page, next);
      await page.getByRole('button', { name: 'Next' }).click();
      await page.locator('#list-alert').getByText('No answer').waitFor();
      await scan('failed request');
      const afterFailure = { rows: await rows(page).count(), retry: await page.locator('#list-alert button').allInnerTexts() };
      await answerAgain();

      await close();
      const expected = Object.fromEntries(Object.keys(found).map((state) => [state, []]));
      assert.deepEqual(found, expected, 'violations in some states');
      assert.deepEqual(afterFailure, { rows: 10, retry: ['Retry'] }, 'after the failed request, the last rows and a Retry button');
    });
  }
}

// ---------------------------------------------------------------------------------------------
// The keyboard walk: page.keyboard alone, as a new user who cannot use a mouse

// describeFocus names the element that has the focus, for messages, and tells whether it is
// visible with a ring around it.
const describeFocus = (page) => page.evaluate(() => {
  const node = document.activeElement;
  if (!node || node === document.body) return { name: '<body>', body: true };
  const style = getComputedStyle(node);
  const label = node.getAttribute('aria-label') || node.textContent.trim().slice(0, 40);
  return {
    name: `<${node.localName}${node.id ? ` id="${node.id}"` : ''}> ${label}`.trim(),
    shown: node.checkVisibility() && node.getClientRects().length > 0,
    ring: style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0,
  };
});

// expectFocus checks that the focus is on the element the selector names, visible, with a ring.
async function expectFocus(page, selector, why) {
  const focus = await describeFocus(page);
  assert.ok(!focus.body, `the focus was lost to <body>; ${why}`);
  assert.ok(await page.evaluate((s) => document.activeElement.matches(s), selector), `the focus is on ${focus.name}; ${why}`);
  assert.ok(focus.shown, `${focus.name} has the focus but is not visible`);
  assert.ok(focus.ring, `${focus.name} has the focus but no ring shows it`);
}

// tabTo presses Tab (or Shift+Tab) until the focus reaches the selector, checking on the way that
// it never falls to <body>, and returns how many presses that took.
async function tabTo(page, selector, { back = false, max = 40 } = {}) {
  for (let presses = 1; presses <= max; presses++) {
    await page.keyboard.press(back ? 'Shift+Tab' : 'Tab');
    const focus = await describeFocus(page);
    assert.ok(!focus.body, `Tab took the focus to <body> on the way to ${selector}`);
    if (await page.evaluate((s) => document.activeElement.matches(s), selector)) return presses;
  }
  assert.fail(`${max} presses of ${back ? 'Shift+Tab' : 'Tab'} did not reach ${selector}`);
}

// replaceText selects what is in the focused field and types over it.
async function replaceText(page, text) {
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Backspace');
  if (text) await page.keyboard.type(text);
}

test('a person with only a keyboard: the focus is always where they expect it, and visible', async (t) => {
  const { page, expect, close } = await watch(browser, BASE_URL, LAYOUTS['1280 px']);
  const step = steps(t);
  const keys = page.keyboard;
  const editButton = (id) => `#users-body tr[data-id="${id}"] button[data-action="edit"]`;
  let id; // the user this walk creates

  await step('the skip links come first, then the token field; Enter lists the users and the focus stays', async () => {
    await page.goto(BASE_URL + '/');
    await page.getByText('Enter a token to see the users.').waitFor();
    await keys.press('Tab');
    await expectFocus(page, '.skip-link[href="#users-heading"]', 'the first stop is the skip link to the users');
    await keys.press('Tab');
    await expectFocus(page, '.skip-link[href="#exchanges-heading"]', 'the second is the skip link to the exchanges');
    await keys.press('Tab');
    await expectFocus(page, '#token', 'then the token field');
    await keys.type(WRITE_TOKEN);
    await keys.press('Enter');
    await row(page, 'Ada Lovelace').waitFor();
    await expectFocus(page, '#token', 'the focus stays in the token field');
  });

  await step('search; and "Clear the search" in the empty state takes the focus back to the search field', async () => {
    await tabTo(page, '#q');
    await keys.type('ar');
    await page.getByText('Page 1 of 1 · 2 matches').waitFor();
    await expectFocus(page, '#q', 'the search field keeps the focus while the list changes');
    await replaceText(page, 'nobody-has-this');
    await page.getByText('No user matches “nobody-has-this”.').waitFor();
    await tabTo(page, '#list-empty button');
    await keys.press('Enter');
    await expectFocus(page, '#q', 'the empty state goes with the search: the focus goes to the search field');
    await page.getByText('Page 1 of 2 · 12 users').waitFor();
    assert.equal(await page.locator('#q').inputValue(), '');
    await expectFocus(page, '#q', 'still in the search field once the list is back');
  });

  await step('Next and Previous keep the focus, also when the last or first page dims them', async () => {
    await tabTo(page, '#next-page');
    await keys.press('Enter');
    await page.getByText('Page 2 of 2 · 12 users').waitFor();
    await expectFocus(page, '#next-page[aria-disabled="true"]', 'Next keeps the focus on the last page, dimmed');
    await keys.press('Enter'); // nothing to do: it stays on page 2
    await keys.press('Shift+Tab');
    await expectFocus(page, '#prev-page', 'Previous is just before Next');
    await keys.press('Enter');
    await page.getByText('Page 1 of 2 · 12 users').waitFor();
    await expectFocus(page, '#prev-page[aria-disabled="true"]', 'Previous keeps the focus on page 1, dimmed');
  });

  await step('create: "+ New user" leads to the Name field, Create keeps the focus while it sends, and the 201 returns it to Name', async () => {
    await tabTo(page, '#new-user', { back: true });
    await keys.press('Enter');
    await expectFocus(page, '#name', '"+ New user" goes to the first field');
    await keys.type('Katherine Johnson');
    await keys.press('Tab');
    await expectFocus(page, '#email', 'the e-mail field follows');
    await keys.type('katherine@example.com');
    await keys.press('Tab');
    await expectFocus(page, '#save-button', 'then Create user');
    await keys.press('Enter');
    await expectFocus(page, '#save-button[aria-disabled="true"]', 'the button keeps the focus, dimmed, while the request is on its way');
    await page.getByText(/^Created Katherine Johnson: the server gave it id (\d+)/).waitFor();
    id = /id (\d+)/.exec(await page.locator('#form-notice').innerText())[1];
    await row(page, 'Katherine Johnson').waitFor();
    await expectFocus(page, '#name', 'the Name field is ready for the next user');
  });

  await step('a create the server refuses (400): the focus goes to the first field it names', async () => {
    expect(400, 'POST', '/api/users');
    await keys.press('Tab');
    await keys.type('not an address');
    await keys.press('Tab');
    await keys.press('Enter');
    await page.locator('#name-error').getByText('name must not be empty').waitFor();
    await expectFocus(page, '#name[aria-invalid="true"]', 'the first field in error has the focus');
  });

  await step('a create that gets no answer: the focus goes to the alert that says so', async () => {
    expect(0, 'POST', '/api/users');
    const answerAgain = await failAt(page, '/api/users');
    await keys.type('Nobody Home');
    await keys.press('Tab');
    await replaceText(page, 'nobody@example.com');
    await keys.press('Tab');
    await keys.press('Enter');
    await page.locator('#form-alert').getByText('The server could not be reached').waitFor();
    await expectFocus(page, '#form-alert', 'the alert has the focus');
    await answerAgain();
  });

  await step('edit: the row\'s Edit button opens the form at Name; Save (PATCH) and Replace (PUT) keep the focus', async () => {
    await tabTo(page, editButton(id), { back: true });
    await keys.press('Enter');
    await page.getByRole('heading', { name: 'Edit Katherine Johnson' }).waitFor();
    await expectFocus(page, '#name', 'the form opens at the first field');
    await replaceText(page, 'Katherine G. Johnson');
    await tabTo(page, '#save-button');
    await keys.press('Enter');
    await expectFocus(page, '#save-button[aria-disabled="true"]', 'Save keeps the focus, dimmed, while the PATCH is on its way');
    await page.getByText(/^Saved with PATCH/).waitFor();
    await row(page, 'Katherine G. Johnson').waitFor();
    await expectFocus(page, '#save-button', 'Save keeps the focus after the 200');
    await keys.press('Tab');
    await expectFocus(page, '#put-button', 'Replace follows Save');
    await keys.press('Enter');
    await page.getByText(/^Saved with PUT/).waitFor();
    await waitForList(page);
    await expectFocus(page, '#put-button', 'Replace keeps the focus after the 200');
  });

  await step('Escape, and Cancel, leave the edit and take the focus back to the row\'s Edit button', async () => {
    await keys.press('Escape');
    await page.getByRole('heading', { name: 'New user' }).waitFor();
    await expectFocus(page, editButton(id), 'Escape goes back to where the edit began');
    await keys.press('Enter');
    await page.getByRole('heading', { name: 'Edit Katherine G. Johnson' }).waitFor();
    await expectFocus(page, '#name', 'the form opens at Name again');
    await tabTo(page, '#cancel-button');
    await keys.press('Enter');
    await page.getByRole('heading', { name: 'New user' }).waitFor();
    await expectFocus(page, editButton(id), 'Cancel goes back to where the edit began');
  });

  await step('a 412: the focus goes to the alert, and "Reload the user" on to the Name field', async () => {
    await keys.press('Enter');
    await page.getByRole('heading', { name: 'Edit Katherine G. Johnson' }).waitFor();
    await expectFocus(page, '#name', 'the form opens at Name');
    assert.equal((await otherClient(BASE_URL, 'PATCH', `/api/users/${id}`, { name: 'Katherine Coleman Johnson' },
      'application/merge-patch+json')).status, 200);
    expect(412, 'PATCH', `/api/users/${id}`);
    await keys.press('Tab');
    await replaceText(page, 'katherine.j@example.com');
    await keys.press('Enter'); // Enter in a field sends the form, as Save does
    await page.getByText('412 Precondition Failed: someone else changed this user').waitFor();
    await expectFocus(page, '#form-alert', 'the alert has the focus');
    await keys.press('Tab');
    await expectFocus(page, '#form-alert button', 'its Reload button is the next stop');
    await keys.press('Enter');
    await page.getByText(/^Reloaded: the user had changed/).waitFor();
    await expectFocus(page, '#name', 'the alert is gone: the focus goes on to the name, now as the server has it');
    assert.equal(await page.locator('#name').inputValue(), 'Katherine Coleman Johnson');
    await waitForList(page);
    await expectFocus(page, '#name', 'and stays there when the list is read again');
  });

  await step('delete: the confirmation takes the focus, Escape gives it back to "Delete…", and after the 204 the form\'s heading has it', async () => {
    await tabTo(page, '#delete-button');
    await keys.press('Enter');
    await expectFocus(page, '#confirm-no', 'the safe answer has the focus');
    await keys.press('Escape');
    assert.ok(await page.locator('#confirm-delete').isHidden());
    await page.getByRole('heading', { name: 'Edit Katherine Coleman Johnson' }).waitFor(); // Escape closed only the question
    await expectFocus(page, '#delete-button', 'Escape closes the question and goes back to Delete…');
    await keys.press('Enter');
    await expectFocus(page, '#confirm-no', 'asked again');
    await keys.press('Shift+Tab');
    await expectFocus(page, '#confirm-yes', 'Yes, delete is just before Keep');
    await keys.press('Enter');
    await page.getByText(/^Deleted Katherine Coleman Johnson/).waitFor();
    await expectFocus(page, '#editor-heading', 'the user is gone: the heading of the form, now "New user", has the focus');
    await waitForList(page);
    assert.equal(await row(page, 'Katherine Coleman Johnson').count(), 0);
    await expectFocus(page, '#editor-heading', 'and keeps it when the list is read again');
  });

  await step('a list request that fails keeps the rows and offers Retry, which sends it again', async () => {
    const previous = '/api/users?page=1&per_page=10';
    expect(0, 'GET', previous);
    const answerAgain = await failAt(page, previous);
    await tabTo(page, '#prev-page', { back: true });
    await keys.press('Enter');
    await page.locator('#list-alert').getByText('No answer').waitFor();
    assert.equal(await rows(page).count(), 2, 'the last rows, of page 2, stay in view');
    assert.ok(await page.locator('#pager').isVisible(), 'and so does the pager');
    await expectFocus(page, '#prev-page', 'Previous keeps the focus; the alert is read out (role="alert")');
    await tabTo(page, '#list-alert button', { back: true });
    await keys.press('Enter');
    await page.locator('#list-alert').getByText('No answer').waitFor(); // still failing: a new alert
    await expectFocus(page, '#list-alert button', 'the new alert\'s Retry has the focus');
    await answerAgain();
    await keys.press('Enter');
    await page.getByText('Page 1 of 2 · 12 users').waitFor();
    assert.ok(await page.locator('#list-alert').isHidden());
    await expectFocus(page, '#users-heading', 'the alert is gone: the users heading has the focus');
  });

  await step('the exchanges: a skip link reaches them, and a long response scrolls by keyboard', async () => {
    await tabTo(page, '.skip-link[href="#exchanges-heading"]', { back: true, max: 60 });
    await keys.press('Enter');
    await expectFocus(page, '#exchanges-heading', 'the skip link takes the focus to the exchanges');
    await keys.press('Tab');
    await expectFocus(page, '#pretty', '"Indent JSON" is the first control there');
    await keys.press('Space'); // taller bodies, so that the response scrolls
    await keys.press('Tab');
    await expectFocus(page, '#clear-log', 'then Clear');
    await keys.press('Tab');
    await expectFocus(page, '#exchange-log > li:first-child summary', 'then the newest exchange');
    await keys.press('Tab');
    await expectFocus(page, '#exchange-log > li:first-child pre[role="region"]', 'then its request');
    await keys.press('Tab');
    const response = '#exchange-log > li:first-child .wire > div:nth-child(2) pre[role="region"]';
    await expectFocus(page, response, 'then its response, a region named for it');
    const name = await page.evaluate((s) => [...document.querySelector(s).getAttribute('aria-labelledby').split(' ')]
      .map((id) => document.getElementById(id).textContent).join(' '), response);
    assert.match(name, /^Response #\d+$/);
    const box = page.locator(response);
    assert.ok(await box.evaluate((node) => node.scrollHeight > node.clientHeight), 'the indented list is taller than its box');
    await keys.press('PageDown');
    await page.waitForFunction((s) => document.querySelector(s).scrollTop > 0, response);
  });

  await close();
});
