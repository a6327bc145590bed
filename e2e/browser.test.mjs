// The API explorer page in a real browser: Debian's Chromium, headless, driven by playwright-core,
// against the real binary on a loopback port. Run it with ./run.sh, which builds the binary.
//
// It fails on anything the browser reports: a console error or warning, an uncaught exception, a
// failed request, or a 4xx/5xx answer the test did not provoke on purpose. It saves screenshots
// of the main states at desktop and phone widths in screenshots/.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { chromium } from 'playwright-core';
import { LAUNCH, otherClient, row, rows, steps, waitForList, watch as watchPage } from './chromium.mjs';
import { READ_TOKEN, WRITE_TOKEN, startService } from './services.mjs';

// SCREENSHOTS_DIR sends the pictures elsewhere, for a run that should not touch the committed ones.
const SCREENSHOTS = process.env.SCREENSHOTS_DIR
  ? new URL(`file://${process.env.SCREENSHOTS_DIR.replace(/\/?$/, '/')}`)
  : new URL('./screenshots/', import.meta.url);

const DESKTOP = { viewport: { width: 1280, height: 860 } };
const PHONE = { viewport: { width: 375, height: 812 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true };

let browser;
let service;
let BASE_URL;

before(async () => {
  await mkdir(SCREENSHOTS, { recursive: true });
  // -delay makes every /api/ answer slow enough to see, and photograph, the loading states.
  service = await startService(['-delay', '500ms']);
  BASE_URL = service.url;
  browser = await chromium.launch(LAUNCH);
});

after(async () => {
  await browser?.close();
  await service?.stop();
});

// What the browser reports fails the test (chromium.mjs), unless the test provoked it.
const watch = (options) => watchPage(browser, BASE_URL, options);

// ---------------------------------------------------------------------------------------------
// Helpers that act as a person would: by labels, roles and visible text

// exchange returns the newest logged exchange of this method and path.
const exchange = (page, method, path) =>
  page.locator(`#exchange-log li.exchange[data-method="${method}"][data-path="${path}"]`).first();

async function exchangeText(page, method, path) {
  const item = exchange(page, method, path);
  await item.locator('.status-badge').filter({ hasNotText: '…' }).waitFor();
  const details = item.locator('details');
  if (!(await details.evaluate((node) => node.open))) await item.locator('summary').click();
  return {
    request: await item.getByLabel('request').innerText(),
    response: await item.getByLabel('response').innerText(),
  };
}

async function useToken(page, token) {
  await page.getByLabel('Bearer token').fill(token);
  await page.getByRole('button', { name: 'Use token' }).click();
  await waitForList(page);
}

// shot saves a screenshot of what a person sees: the top of the page, or the part that starts
// at the element `at`, or the whole page, with no hover or focus left over from the test's own clicks.
async function shot(page, name, { at, fullPage = false } = {}) {
  await page.mouse.move(0, 0);
  await page.evaluate((selector) => {
    document.activeElement?.blur?.();
    if (selector) {
      document.querySelector(selector).scrollIntoView({ block: 'start' });
      window.scrollBy(0, -12);
    } else {
      window.scrollTo(0, 0);
    }
  }, at);
  await page.screenshot({ path: new URL(`${name}.png`, SCREENSHOTS).pathname, fullPage, animations: 'disabled' });
}

const apiRequest = (...args) => otherClient(BASE_URL, ...args); // changes the service behind the page's back

// ---------------------------------------------------------------------------------------------

test('the page is served with its assets, a strict CSP and no inline code', async () => {
  const response = await fetch(BASE_URL + '/');
  assert.equal(response.status, 200);
  assert.match(response.headers.get('Content-Type'), /^text\/html/);
  const csp = response.headers.get('Content-Security-Policy');
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /script-src 'self'(;|$)/);
  assert.doesNotMatch(csp, /unsafe/);
  const html = await response.text();
  assert.doesNotMatch(html, /<script>|<style|style="|\son[a-z]+="/i, 'inline script or style would break the CSP');
  assert.doesNotMatch(html, /https?:\/\//, 'the page must work with no network: nothing from another origin');
});

test('a person manages users on a desktop, and sees every exchange', async (t) => {
  const { page, expect, close } = await watch(DESKTOP);
  const step = steps(t);

  await step('before a token: the page says what to do, and has sent nothing to the API', async () => {
    await page.goto(BASE_URL + '/');
    await page.getByText('Enter a token to see the users.').waitFor();
    assert.equal(await page.locator('#exchange-log li').count(), 0);
    await shot(page, 'desktop-no-token');
  });

  await step('keyboard: the token field is the first stop after the skip links, and Enter submits it', async () => {
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement.textContent), 'Skip to the users');
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement.textContent), 'Skip to the HTTP exchanges');
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement.id), 'token');
    await page.keyboard.type(WRITE_TOKEN);
    await page.keyboard.press('Enter');
    await waitForList(page);
  });

  await step('with the token: the seeded users, paged, and the GET shown on the wire', async () => {
    await row(page, 'Ada Lovelace').waitFor();
    assert.equal(await rows(page).count(), 10);
    await page.getByText('Page 1 of 2 · 12 users').waitFor();
    const { request, response } = await exchangeText(page, 'GET', '/api/users?page=1&per_page=10');
    assert.match(request, /^GET \/api\/users\?page=1&per_page=10 HTTP\/1\.1$/m);
    assert.match(request, new RegExp(`^Authorization: Bearer ••••${WRITE_TOKEN.slice(-4)}$`, 'm'));
    assert.ok(!request.includes(WRITE_TOKEN), 'the token is masked');
    assert.match(response, /^HTTP\/1\.1 200 OK$/m);
    assert.match(response, /^Etag: "[0-9a-f]+"$/m);
    assert.match(response, /^Link: .*rel="next"/m);
    assert.match(response, /"total":12,"page":1,"per_page":10,"total_pages":2/);
    assert.equal(await page.evaluate(() => sessionStorage.getItem('users-explorer-token')), WRITE_TOKEN);
    assert.ok(!page.url().includes(WRITE_TOKEN), 'the token is never in the URL');
    await shot(page, 'desktop-list');
  });

  await step('paging follows the Link header', async () => {
    await page.getByRole('button', { name: 'Next' }).click();
    await waitForList(page);
    await page.getByText('Page 2 of 2 · 12 users').waitFor();
    assert.equal(await rows(page).count(), 2);
    await row(page, 'John Backus').waitFor();
    assert.ok(await page.getByRole('button', { name: 'Next' }).isDisabled());
    await page.getByRole('button', { name: 'Previous' }).click();
    await waitForList(page);
    await page.getByText('Page 1 of 2 · 12 users').waitFor();
  });

  await step('search and sort are the API\'s q and sort', async () => {
    await page.getByLabel('Search').fill('AR');
    await page.getByText('Page 1 of 1 · 2 matches').waitFor();
    assert.deepEqual(await page.locator('#users-body td.name').allInnerTexts(), ['Barbara Liskov', 'Margaret Hamilton']);
    await page.getByLabel('Sort by').selectOption('-name');
    await exchange(page, 'GET', '/api/users?page=1&per_page=10&q=AR&sort=-name').locator('.status-badge', { hasText: '200 OK' }).waitFor();
    await waitForList(page);
    assert.deepEqual(await page.locator('#users-body td.name').allInnerTexts(), ['Margaret Hamilton', 'Barbara Liskov']);

    await page.getByLabel('Search').fill('nobody-has-this');
    await page.getByText('No user matches “nobody-has-this”.').waitFor();
    await shot(page, 'desktop-empty-search');
    await page.getByRole('button', { name: 'Clear the search' }).click();
    await waitForList(page);
    await page.getByLabel('Sort by').selectOption('id');
    await waitForList(page);
    await page.getByText('Page 1 of 2 · 12 users').waitFor();
  });

  await step('create a user: 201, Location, and the new user listed', async () => {
    await page.getByRole('button', { name: '+ New user' }).click();
    await page.getByLabel('Name').fill('Katherine Johnson');
    await page.getByLabel('E-mail').fill('katherine@example.com');
    await page.getByRole('button', { name: 'Create user' }).click();
    await page.getByText(/Created Katherine Johnson: the server gave it id 13/).waitFor();
    await row(page, 'Katherine Johnson').waitFor();
    const { request, response } = await exchangeText(page, 'POST', '/api/users');
    assert.match(request, /^Content-Type: application\/json$/m);
    assert.match(request, /\{"name":"Katherine Johnson","email":"katherine@example\.com"\}$/);
    assert.match(response, /^HTTP\/1\.1 201 Created$/m);
    assert.match(response, /^Location: \/api\/users\/13$/m);

    // "Indent JSON" only changes how a body is shown: indented, then raw again.
    await page.getByLabel('Indent JSON').check();
    assert.match((await exchangeText(page, 'POST', '/api/users')).response, /^\{\n {2}"id": 13,\n {2}"name"/m);
    await page.getByLabel('Indent JSON').uncheck();
    assert.match((await exchangeText(page, 'POST', '/api/users')).response, /^\{"id":13,"name"/m);
  });

  let etag;
  await step('edit it with PATCH: only the changed field, as a merge patch, with If-Match', async () => {
    await row(page, 'Katherine Johnson').getByRole('button', { name: 'Edit Katherine Johnson' }).click();
    await page.getByRole('heading', { name: 'Edit Katherine Johnson' }).waitFor();
    assert.equal(await page.getByLabel('E-mail').inputValue(), 'katherine@example.com');
    etag = (await page.locator('#etag-value').innerText()).trim();
    await page.getByLabel('Name').fill('Katherine G. Johnson');
    await page.getByRole('button', { name: 'Save changes (PATCH)' }).click();
    await page.getByText(/^Saved with PATCH/).waitFor();
    await row(page, 'Katherine G. Johnson').waitFor();
    const { request, response } = await exchangeText(page, 'PATCH', '/api/users/13');
    assert.match(request, /^Content-Type: application\/merge-patch\+json$/m);
    assert.match(request, new RegExp(`^If-Match: ${etag}$`, 'm'));
    assert.match(request, /\{"name":"Katherine G\. Johnson"\}$/);
    assert.match(response, /^HTTP\/1\.1 200 OK$/m);
    assert.match(response, /^Content-Location: \/api\/users\/13$/m);
    const newETag = (await page.locator('#etag-value').innerText()).trim();
    assert.notEqual(newETag, etag, 'the form keeps the new ETag from the answer');
    etag = newETag;
  });

  await step('replace it with PUT: the whole user; its answer has no ETag, so the page reads the user for it', async () => {
    await page.getByLabel('E-mail').fill('kjohnson@example.com');
    await page.getByRole('button', { name: 'Replace (PUT)' }).click();
    await page.getByText(/^Saved with PUT\. Its answer carries no ETag/).waitFor();
    await row(page, 'Katherine G. Johnson').getByRole('cell', { name: 'kjohnson@example.com' }).waitFor();
    const put = await exchangeText(page, 'PUT', '/api/users/13');
    assert.match(put.request, /\{"name":"Katherine G\. Johnson","email":"kjohnson@example\.com"\}$/);
    assert.match(put.request, new RegExp(`^If-Match: ${etag}$`, 'm'));
    assert.match(put.response, /^HTTP\/1\.1 200 OK$/m);
    assert.match(put.response, /^Content-Location: \/api\/users\/13$/m);
    assert.doesNotMatch(put.response, /^Etag:/m, 'a PUT answer carries no ETag (RFC 9110 §9.3.4)');
    const read = await exchangeText(page, 'GET', '/api/users/13');
    const readETag = /^Etag: ("[0-9a-f]+")$/m.exec(read.response)?.[1];
    assert.ok(readETag, `the GET after the PUT has no ETag:\n${read.response}`);
    await exchange(page, 'GET', '/api/users/13').getByText(/^Sent by the page after the PUT: a PUT answer carries no ETag/).waitFor();
    assert.equal((await page.locator('#etag-value').innerText()).trim(), readETag, 'the form keeps the ETag it read');
  });

  await step('a 400: each field error appears next to its field', async () => {
    expect(400, 'PUT', '/api/users/13');
    await page.getByLabel('Name').fill('   ');
    await page.getByLabel('E-mail').fill('not an address');
    await page.getByRole('button', { name: 'Replace (PUT)' }).click();
    await page.locator('#email-error').getByText('email must be a plain address such as ann@example.com').waitFor();
    await page.locator('#name-error').getByText('name must not be empty').waitFor();
    assert.equal(await page.getByLabel('E-mail').getAttribute('aria-invalid'), 'true');
    assert.equal(await page.getByLabel('Name').getAttribute('aria-describedby'), 'name-error');
    assert.equal(await page.evaluate(() => document.activeElement.id), 'name', 'the first failing field has the focus');
    await page.getByRole('alert').getByText('400 Bad Request').waitFor();
    const { response } = await exchangeText(page, 'PUT', '/api/users/13');
    assert.match(response, /^HTTP\/1\.1 400 Bad Request$/m);
    assert.match(response, /"fields":\{/);
    await shot(page, 'desktop-field-errors', { fullPage: true });
  });

  await step('a 409 is shown at the e-mail field', async () => {
    expect(409, 'PATCH', '/api/users/13');
    await page.getByLabel('Name').fill('Katherine G. Johnson');
    await page.getByLabel('E-mail').fill('ADA@example.com');
    await page.getByRole('button', { name: 'Save changes (PATCH)' }).click();
    await page.locator('#email-error').getByText('another user already has this email').waitFor();
    assert.equal(await page.locator('#name-error').isHidden(), true);
  });

  await step('If-Match: a change made meanwhile by someone else is a 412, and nothing is overwritten', async () => {
    etag = (await page.locator('#etag-value').innerText()).trim(); // as read after the last PUT
    const theirs = await apiRequest('PATCH', '/api/users/13', { name: 'Katherine Coleman Johnson' }, 'application/merge-patch+json');
    assert.equal(theirs.status, 200);
    expect(412, 'PATCH', '/api/users/13');
    await page.getByLabel('E-mail').fill('katherine.j@example.com');
    await page.getByRole('button', { name: 'Save changes (PATCH)' }).click();
    await page.getByText('412 Precondition Failed: someone else changed this user').waitFor();
    const { request, response } = await exchangeText(page, 'PATCH', '/api/users/13');
    assert.match(request, new RegExp(`^If-Match: ${etag}$`, 'm'));
    assert.match(response, /^HTTP\/1\.1 412 Precondition Failed$/m);
    assert.equal((await apiRequest('GET', '/api/users/13')).json.email, 'kjohnson@example.com', 'their change stands');
    await shot(page, 'desktop-412', { at: '#users-body' });

    await page.getByRole('button', { name: 'Reload the user' }).click();
    await page.getByText(/^Reloaded: the user had changed/).waitFor();
    assert.equal(await page.getByLabel('Name').inputValue(), 'Katherine Coleman Johnson');
    const reload = await exchangeText(page, 'GET', '/api/users/13');
    assert.match(reload.request, new RegExp(`^If-None-Match: ${etag}$`, 'm'));

    await page.getByRole('button', { name: 'Reload', exact: true }).click();
    await page.getByText(/^304 Not Modified: the user is as you read it/).waitFor();
  });

  await step('delete it: confirm, DELETE with If-Match, 204, gone from the list', async () => {
    await page.getByRole('button', { name: 'Delete…' }).click();
    await page.getByText(/Delete Katherine Coleman Johnson \(id 13\)\?/).waitFor();
    await page.getByRole('button', { name: 'Yes, delete' }).click();
    await page.getByText(/^Deleted Katherine Coleman Johnson \(id 13\)/).waitFor();
    const { request, response } = await exchangeText(page, 'DELETE', '/api/users/13');
    assert.match(request, /^If-Match: "[0-9a-f]+"$/m);
    assert.match(response, /^HTTP\/1\.1 204 No Content$/m);
    await waitForList(page);
    assert.equal(await row(page, 'Katherine Coleman Johnson').count(), 0);
    assert.equal((await apiRequest('GET', '/api/users/13')).status, 404);
    await page.getByRole('heading', { name: 'New user' }).waitFor();
  });

  await step('the loading state shows while the server answers (-delay)', async () => {
    await page.getByText('Page 2 of 2 · 12 users').waitFor();
    await page.getByRole('button', { name: 'Previous' }).click();
    await page.locator('#list-region[aria-busy="true"]').waitFor();
    await exchange(page, 'GET', '/api/users?page=1&per_page=10').locator('.status-badge', { hasText: '…' }).waitFor();
    await shot(page, 'desktop-loading');
    await waitForList(page);
    await page.getByText('Page 1 of 2 · 12 users').waitFor();
  });

  await step('a read token may list but not change: 403 in the form', async () => {
    await useToken(page, READ_TOKEN);
    await row(page, 'Ada Lovelace').waitFor();
    expect(403, 'POST', '/api/users');
    await page.getByRole('button', { name: '+ New user' }).click();
    await page.getByLabel('Name').fill('Read Only');
    await page.getByLabel('E-mail').fill('read.only@example.com');
    await page.getByRole('button', { name: 'Create user' }).click();
    await page.getByRole('alert').getByText('403 Forbidden').waitFor();
    const { response } = await exchangeText(page, 'POST', '/api/users');
    assert.match(response, /^Www-Authenticate: Bearer realm="users", error="insufficient_scope"$/m);
  });

  await step('a bad token: 401, said in words, with the challenge on the wire', async () => {
    expect(401, 'GET', '/api/users?page=1&per_page=10');
    await useToken(page, 'not-a-real-token-9z9z');
    await page.getByRole('alert').getByText('401 Unauthorized').waitFor();
    await page.getByText('The server says: the bearer token is malformed or unknown.').waitFor();
    assert.equal(await rows(page).count(), 0);
    const { request, response } = await exchangeText(page, 'GET', '/api/users?page=1&per_page=10');
    assert.match(request, /^Authorization: Bearer ••••9z9z$/m);
    assert.match(response, /^HTTP\/1\.1 401 Unauthorized$/m);
    assert.match(response, /^Www-Authenticate: Bearer realm="users", error="invalid_token"$/m);
    await shot(page, 'desktop-401');
  });

  await step('forget the token', async () => {
    await page.getByRole('button', { name: 'Forget' }).click();
    await page.getByText('Enter a token to see the users.').waitFor();
    assert.equal(await page.evaluate(() => sessionStorage.getItem('users-explorer-token')), null);
  });

  await close();
});

test('the same page on a 375 px phone', async () => {
  const { page, expect, close } = await watch(PHONE);
  await page.goto(BASE_URL + '/');
  await useToken(page, WRITE_TOKEN);
  await row(page, 'Ada Lovelace').waitFor();

  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.equal(overflow, 0, 'nothing is wider than the screen');
  await shot(page, 'phone-list');

  await row(page, 'Alan Turing').getByRole('button', { name: 'Edit Alan Turing' }).click();
  await page.getByRole('heading', { name: 'Edit Alan Turing' }).waitFor();
  expect(400, 'PATCH', '/api/users/2');
  await page.getByLabel('E-mail').fill('alan at example.com');
  await page.getByRole('button', { name: 'Save changes (PATCH)' }).click();
  await page.locator('#email-error').getByText('email must be a plain address such as ann@example.com').waitFor();
  await shot(page, 'phone-field-error', { at: '#editor-heading' });
  await shot(page, 'phone-exchange', { at: '#exchange-log' });
  const after = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.equal(after, 0, 'the exchange log wraps rather than scrolls sideways');
  await close();
});

// A PUT answer carries no ETag (RFC 9110 §9.3.4: the server trims the body and adds the id, so what
// it stores is not what was sent). The page must still send If-Match with its next save of that
// user, with the ETag of the user as the form shows it: never an older one, and never none.
test('after a PUT, whose answer has no ETag, the next save still sends the user\'s current ETag in If-Match', async (t) => {
  const { page, expect, close } = await watch(DESKTOP);
  const step = steps(t);
  const path = '/api/users/3'; // Grace Hopper of -sample-data
  const shown = async () => (await page.locator('#etag-value').innerText()).trim();
  const current = async () => (await apiRequest('GET', path)).etag; // the ETag the server has now
  const ifMatchOf = (request) => /^If-Match: (.*)$/m.exec(request)?.[1];
  const count = (method) => page.locator(`#exchange-log li.exchange[data-method="${method}"][data-path="${path}"]`).count();
  // onRead runs fn when the page reads the user, before the request goes on (or instead of it).
  const onRead = async (fn) => {
    const matches = (url) => url.href === BASE_URL + path;
    await page.route(matches, async (route) => (route.request().method() === 'GET' ? fn(route) : route.fallback()));
    return () => page.unroute(matches);
  };
  const save = async (button, notice) => {
    await page.getByRole('button', { name: button }).click();
    await page.getByText(notice).waitFor();
    await waitForList(page);
  };

  await step('a PUT: sent with the ETag read, answered without one; the page reads the user for it', async () => {
    await page.goto(BASE_URL + '/');
    await useToken(page, WRITE_TOKEN);
    await row(page, 'Grace Hopper').getByRole('button', { name: 'Edit Grace Hopper' }).click();
    await page.getByRole('heading', { name: 'Edit Grace Hopper' }).waitFor();
    const read = await shown();
    await page.getByLabel('Name').fill('  Grace B. Hopper  '); // stored trimmed: not the body as sent
    await save('Replace (PUT)', /^Saved with PUT\. Its answer carries no ETag/);
    const put = await exchangeText(page, 'PUT', path);
    assert.equal(ifMatchOf(put.request), read);
    assert.match(put.response, /^HTTP\/1\.1 200 OK$/m);
    assert.doesNotMatch(put.response, /^Etag:/m, 'a PUT answer carries no ETag');
    assert.match(put.response, /"name":"Grace B\. Hopper"/);
    const again = await exchangeText(page, 'GET', path);
    assert.match(again.response, /^HTTP\/1\.1 200 OK$/m);
    assert.equal(await shown(), await current(), 'the form holds the ETag the server has now');
    assert.equal(await page.getByLabel('Name').inputValue(), 'Grace B. Hopper', 'the form shows the user as stored');
    await shot(page, 'desktop-after-put');
  });

  await step('the second save, a PUT again, is sent with that ETag and succeeds', async () => {
    const tag = await shown();
    await page.getByLabel('E-mail').fill('grace.hopper@example.com');
    await save('Replace (PUT)', /^Saved with PUT\. Its answer carries no ETag/);
    const put = await exchangeText(page, 'PUT', path);
    assert.equal(ifMatchOf(put.request), tag);
    assert.match(put.response, /^HTTP\/1\.1 200 OK$/m);
    assert.equal((await apiRequest('GET', path)).json.email, 'grace.hopper@example.com');
    assert.equal(await shown(), await current());
  });

  await step('then a PATCH, sent with the ETag read after the PUT: its answer has the next ETag, and no read follows', async () => {
    const tag = await shown();
    const reads = await count('GET');
    await page.getByLabel('Name').fill('Grace Hopper');
    await save('Save changes (PATCH)', /^Saved with PATCH/);
    const patch = await exchangeText(page, 'PATCH', path);
    assert.equal(ifMatchOf(patch.request), tag);
    assert.match(patch.response, /^HTTP\/1\.1 200 OK$/m);
    const answered = /^Etag: (.*)$/m.exec(patch.response)?.[1];
    assert.equal(await shown(), answered, 'the form keeps the ETag of the PATCH answer');
    assert.equal(answered, await current());
    assert.equal(await count('GET'), reads, 'no read after a PATCH: its answer has the ETag');
  });

  await step('someone changes the user between the PUT and the page\'s read: the form shows their change, with its ETag', async () => {
    const stop = await onRead(async (route) => {
      assert.equal((await apiRequest('PATCH', path, { name: 'Amazing Grace' }, 'application/merge-patch+json')).status, 200);
      await route.fallback();
    });
    await page.getByLabel('E-mail').fill('grace@example.com');
    await save('Replace (PUT)', /^Saved with PUT, but someone changed the user right after/);
    await stop();
    assert.equal(await page.getByLabel('Name').inputValue(), 'Amazing Grace');
    assert.equal(await page.getByLabel('E-mail').inputValue(), 'grace@example.com');
    assert.equal(await shown(), await current(), 'the ETag is that of what the form shows, not of what the PUT stored');
  });

  await step('someone changes the user after the read: the next save is a 412, explained, and nothing is overwritten', async () => {
    const tag = await shown();
    assert.equal((await apiRequest('PATCH', path, { name: 'Grace M. Hopper' }, 'application/merge-patch+json')).status, 200);
    expect(412, 'PUT', path);
    await page.getByLabel('Name').fill('Grace Hopper');
    await page.getByRole('button', { name: 'Replace (PUT)' }).click();
    await page.getByText('412 Precondition Failed: someone else changed this user').waitFor();
    await page.getByText('Nothing was saved. Reload to see their change, then make yours again.').waitFor();
    const put = await exchangeText(page, 'PUT', path);
    assert.equal(ifMatchOf(put.request), tag);
    assert.match(put.response, /^HTTP\/1\.1 412 Precondition Failed$/m);
    assert.equal((await apiRequest('GET', path)).json.name, 'Grace M. Hopper', 'their change stands');

    await page.getByRole('button', { name: 'Reload the user' }).click();
    await page.getByText(/^Reloaded: the user had changed/).waitFor();
    assert.equal(await page.getByLabel('Name').inputValue(), 'Grace M. Hopper');
    const reloaded = await shown();
    assert.equal(reloaded, await current());
    await page.getByLabel('Name').fill('Grace Hopper');
    await save('Replace (PUT)', /^Saved with PUT\. Its answer carries no ETag/);
    assert.equal(ifMatchOf((await exchangeText(page, 'PUT', path)).request), reloaded);
    assert.equal((await apiRequest('GET', path)).json.name, 'Grace Hopper');
  });

  await step('the read after a PUT gets no answer: the next save is not sent without an ETag, and Reload gets one', async () => {
    expect(0, 'GET', path);
    const stop = await onRead((route) => route.abort('connectionrefused'));
    await page.getByLabel('Name').fill('Grace Brewster Hopper');
    await page.getByRole('button', { name: 'Replace (PUT)' }).click();
    await page.getByText('Saved with PUT, but the user could not be read again for its ETag').waitFor();
    await stop();
    assert.equal(await page.evaluate(() => document.activeElement.id), 'form-alert', 'the alert has the focus');
    assert.equal((await apiRequest('GET', path)).json.name, 'Grace Brewster Hopper', 'the PUT was saved');

    const patches = await count('PATCH');
    await page.getByLabel('Name').fill('Grace Hopper');
    await page.getByRole('button', { name: 'Save changes (PATCH)' }).click();
    await page.getByText('Not sent: the page holds no ETag for this user').waitFor();
    assert.equal(await count('PATCH'), patches, 'no PATCH went out without If-Match');

    await page.getByRole('button', { name: 'Reload the user' }).click();
    await page.getByText(/^Reloaded: the form shows the user as the server has it/).waitFor();
    const reloaded = await shown();
    assert.equal(reloaded, await current());
    await page.getByLabel('Name').fill('Grace Hopper');
    await save('Save changes (PATCH)', /^Saved with PATCH/);
    assert.equal(ifMatchOf((await exchangeText(page, 'PATCH', path)).request), reloaded);
    assert.equal((await apiRequest('GET', path)).json.name, 'Grace Hopper');
  });

  await close();
});
