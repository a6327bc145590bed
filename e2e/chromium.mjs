// What the browser tests share: how Chromium is launched, and watch(), which opens a page and
// records everything the browser reports that would be a problem.
import assert from 'node:assert/strict';
import { READ_TOKEN, WRITE_TOKEN } from './services.mjs';

// Chromium as this machine allows it: no sandbox (root), and none of the background connections
// to Google's services, which a machine without internet would refuse by the dozen. Playwright
// gives each launch a fresh, empty profile of its own.
//
// --disable-background-networking does not stop them all: Chromium still looks up and connects to
// Google hosts (accounts, update and autofill services). The host resolver rule makes every name
// but 127.0.0.1 fail to resolve inside the browser, so a test run reaches nothing but the service.
// (Playwright passes each argument as it is, with no shell: no quotes around the rule.)
export const LAUNCH = {
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1'],
};

// watch opens a page and records every problem it reports: any console message of type error or
// warning, uncaught exception, failed request, or 4xx/5xx answer. expect(status, method, path)
// declares an answer the test is about to provoke (a 400, a 401, a 412), or with status 0 a
// request it makes fail with no answer. Chromium logs each such fetch in the console ("Failed to
// load resource: the server responded with a status of 401 (Unauthorized)", or "Failed to load
// resource: net::ERR_CONNECTION_REFUSED"), and that exact message, for that URL, is the only
// console error let through. close() fails the test if anything else was reported.
export async function watch(browser, baseURL, options) {
  const context = await browser.newContext(options);
  context.setDefaultTimeout(10_000); // every wait here takes well under a second, -delay included
  const page = await context.newPage();
  const problems = [];
  const expected = [];
  const isExpected = (status, method, url) =>
    expected.some((e) => e.status === status && (!method || e.method === method) && url === baseURL + e.path);

  page.on('console', (message) => {
    if (message.type() !== 'error' && message.type() !== 'warning') return;
    const failed = /^Failed to load resource: (?:the server responded with a status of (\d{3}) \([^)]*\)|net::ERR_[A-Z_]+)$/.exec(message.text());
    if (failed && isExpected(Number(failed[1] || 0), null, message.location().url)) return;
    problems.push(`console ${message.type()}: ${message.text()} (${message.location().url})`);
  });
  page.on('pageerror', (error) => problems.push(`uncaught exception: ${error.message}`));
  page.on('requestfailed', (request) => {
    if (isExpected(0, request.method(), request.url())) return;
    problems.push(`request failed: ${request.method()} ${request.url()}: ${request.failure()?.errorText}`);
  });
  page.on('response', (response) => {
    const request = response.request();
    if (response.status() >= 400 && !isExpected(response.status(), request.method(), response.url())) {
      problems.push(`unexpected answer: ${request.method()} ${response.url()} -> ${response.status()}`);
    }
    if (response.url().includes(WRITE_TOKEN) || response.url().includes(READ_TOKEN)) {
      problems.push(`a token appeared in a URL: ${request.method()} ${response.url().replace(/[?#].*/, '?…')}`);
    }
  });

  return {
    page,
    context,
    problems,
    expect: (status, method, path) => expected.push({ status, method, path }),
    async close() {
      await context.close();
      assert.deepEqual(problems, [], 'the browser reported problems');
    },
  };
}

// steps runs the subtests of one story in order. Each builds on the one before, so after a
// failure the rest are skipped: the first failure is the one worth reading.
export function steps(t) {
  let failed = '';
  return (name, fn) => t.test(name, { skip: failed ? `after "${failed}" failed` : false }, async () => {
    try {
      await fn();
    } catch (error) {
      failed = name;
      throw error;
    }
  });
}

// ---------------------------------------------------------------------------------------------
// Helpers that act as a person would: by labels, roles and visible text

export const rows = (page) => page.locator('#users-body tr:not(.skeleton)');
export const row = (page, name) => page.locator('#users-body tr', { has: page.getByRole('cell', { name, exact: true }) });

export async function waitForList(page) {
  await page.locator('#list-region:not([aria-busy])').waitFor({ state: 'attached' });
}

// otherClient sends a request to the service at baseURL behind the page's back, as another client would.
export async function otherClient(baseURL, method, path, body, contentType = 'application/json') {
  const response = await fetch(baseURL + path, {
    method,
    headers: { Authorization: `Bearer ${WRITE_TOKEN}`, ...(body ? { 'Content-Type': contentType } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: response.status, etag: response.headers.get('ETag'), json: response.status === 204 ? null : await response.json() };
}
