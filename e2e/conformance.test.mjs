// Does web/openapi.json describe every answer the service really gives? Prism's validating proxy,
// a tool independent of this repository, stands between these requests and the real binary and
// checks each answer against the document: status, headers, body. Every status the service can
// be made to send is provoked here (500 needs a panic or a broken disk: it is left to the Go tests).
//
// Some requests are outside what Prism can check, because Prism answers them itself: a path or
// method the document does not list, and a body that is not JSON (Prism parses it first; the
// service's 400 for it has the same Error body as the 400s checked here). The document describes
// the answers to paths and methods it does not list in words, in info.description: the last test
// sends those requests to the service directly and checks each answer against those words and the
// ErrorBody schema. And HEAD of a JSON resource breaks Prism 5, which parses the empty body as
// JSON; the Go tests check HEAD over a real connection.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { READ_TOKEN, WRITE_TOKEN, startPrism, startService } from './services.mjs';

const DOCUMENT = new URL('../web/openapi.json', import.meta.url).pathname;
const ORIGIN = 'http://localhost:3000';

const asWriter = { Authorization: `Bearer ${WRITE_TOKEN}` };
const asReader = { Authorization: `Bearer ${READ_TOKEN}` };
const json = { 'Content-Type': 'application/json' };
const mergePatch = { 'Content-Type': 'application/merge-patch+json' };

const running = [];
let plain; // Prism in front of the service with its default flags
let cors; // Prism in front of the service started with -cors-origin
const direct = {}; // the two services themselves, for what Prism cannot check

before(async () => {
  for (const flags of [[], ['-cors-origin', ORIGIN]]) {
    const service = await startService(flags);
    running.push(service);
    const prism = await startPrism(DOCUMENT, service.url);
    running.push(prism);
    if (flags.length) [cors, direct.cors] = [prism.url, service];
    else [plain, direct.plain] = [prism.url, service];
  }
});

after(async () => {
  await Promise.all(running.map((p) => p.stop()));
});

// check sends a request through Prism and fails on any mismatch Prism found in the answer, on an
// answer Prism made up itself, and on a status other than the one the service should send.
async function check(base, method, path, { headers = {}, body, status }) {
  const response = await fetch(base + path, {
    method,
    headers,
    body: typeof body === 'string' || body === undefined ? body : JSON.stringify(body),
  });
  const text = await response.text();
  const what = `${method} ${path} -> ${response.status}`;
  // Every answer of the service has an X-Request-Id; Prism's own answers have none.
  assert.ok(response.headers.has('X-Request-Id'), `${what}: Prism answered instead of the service: ${text}`);
  const violations = JSON.parse(response.headers.get('sl-violations') || '[]')
    .filter((v) => v.location[0] === 'response')
    .map((v) => `${v.location.join('.')}: ${v.message}`);
  assert.deepEqual(violations, [], `${what}: the answer is not what the document describes`);
  assert.equal(response.status, status, `${what}, want ${status}: ${text}`);
  return { response, text, json: text && response.headers.get('Content-Type') === 'application/json' ? JSON.parse(text) : null };
}

test('the page, its files, the document and /healthz', async () => {
  await check(plain, 'GET', '/healthz', { status: 200 });
  for (const path of ['/', '/openapi.json', '/assets/app.js', '/assets/app.css', '/assets/favicon.svg']) {
    const { response } = await check(plain, 'GET', path, { status: 200 });
    await check(plain, 'GET', path, { headers: { 'If-None-Match': response.headers.get('ETag') }, status: 304 });
    await check(plain, 'GET', path, { headers: { 'If-Match': '"0"' }, status: 412 });
    await check(plain, 'OPTIONS', path, { status: 204 });
  }
  await check(plain, 'HEAD', '/', { status: 200 });
  await check(plain, 'HEAD', '/assets/app.css', { status: 200 });
  await check(plain, 'GET', '/assets/nope.js', { status: 404 });
  await check(plain, 'OPTIONS', '/healthz', { status: 204 });
});

test('OPTIONS needs no token, and names the methods', async () => {
  await check(plain, 'OPTIONS', '/api/users', { status: 204 });
  await check(plain, 'OPTIONS', '/api/users/1', { status: 204 });
  await check(plain, 'OPTIONS', '/api/users/1', { headers: { Authorization: 'Bearer wrong' }, status: 204 });
  await check(plain, 'OPTIONS', '/api/users/abc', { status: 404 });
});

test('401 without a valid token', async () => {
  await check(plain, 'GET', '/api/users', { status: 401 });
  await check(plain, 'GET', '/api/users', { headers: { Authorization: 'Basic dXNlcjpwYXNz' }, status: 401 });
  await check(plain, 'GET', '/api/users/1', { headers: { Authorization: 'Bearer not-a-token' }, status: 401 });
  await check(plain, 'DELETE', '/api/users/1', { headers: { Authorization: 'Bearer ' }, status: 401 });
  await check(plain, 'POST', '/api/users', { headers: json, body: {}, status: 401 });
});

test('the list: whole, paged, searched, sorted, filtered, and refused', async () => {
  const whole = await check(plain, 'GET', '/api/users', { headers: asReader, status: 200 });
  assert.equal(whole.json.total, 12);
  await check(plain, 'GET', '/api/users', { headers: { ...asReader, 'If-None-Match': whole.response.headers.get('ETag') }, status: 304 });
  const paged = await check(plain, 'GET', '/api/users?page=2&per_page=5', { headers: asReader, status: 200 });
  assert.match(paged.response.headers.get('Link'), /rel="prev"/);
  await check(plain, 'GET', '/api/users?page=2&per_page=5', { headers: { ...asReader, 'If-None-Match': paged.response.headers.get('ETag') }, status: 304 });
  await check(plain, 'GET', '/api/users?page=1&per_page=1&q=ar&sort=-name', { headers: asReader, status: 200 });
  await check(plain, 'GET', '/api/users?email=ADA@example.com', { headers: asReader, status: 200 });
  await check(plain, 'GET', '/api/users?q=nobody', { headers: asReader, status: 200 });
  await check(plain, 'GET', '/api/users?page=99&per_page=5', { headers: asReader, status: 200 });
  // A page beyond 2^53-1, which JavaScript tools take as the largest int64: the document says pages go to 2^63-1.
  await check(plain, 'GET', '/api/users?page=9007199254740993', { headers: asReader, status: 200 });
  await check(plain, 'GET', '/api/users?page=9223372036854775807&per_page=100', { headers: asReader, status: 200 });
  await check(plain, 'GET', '/api/users?q=nobody&page=1', { headers: asReader, status: 200 });
  for (const query of ['pgae=2', 'per_page=101', 'page=0', 'page=01', 'page=1&page=2', 'sort=age', 'email=']) {
    await check(plain, 'GET', `/api/users?${query}`, { headers: asReader, status: 400 });
  }
});

test('create: 201, and every way a POST can fail', async () => {
  const valid = { name: 'Katherine Johnson', email: 'katherine@example.com' };
  await check(plain, 'POST', '/api/users', { headers: { ...asReader, ...json }, body: valid, status: 403 });
  await check(plain, 'POST', '/api/users', { headers: asWriter, body: JSON.stringify(valid), status: 415 });
  await check(plain, 'POST', '/api/users', { headers: { ...asWriter, 'Content-Type': 'text/plain' }, body: valid, status: 415 });
  const compressed = await check(plain, 'POST', '/api/users', { headers: { ...asWriter, ...json, 'Content-Encoding': 'gzip' }, body: valid, status: 415 });
  assert.equal(compressed.response.headers.get('Accept-Encoding'), 'identity');
  const huge = { name: 'a'.repeat(1 << 20), email: 'ann@example.com' }; // valid JSON, so Prism passes it on
  await check(plain, 'POST', '/api/users', { headers: { ...asWriter, ...json }, body: huge, status: 413 });
  for (const body of ['[]', 'null', { name: 'Ann', email: 'ann@example.com', nickname: 'Ann' },
    { name: '', email: 'nope' }, { name: 5, email: 'ann@example.com' }, { id: 1, ...valid }, { name: null, email: null }]) {
    await check(plain, 'POST', '/api/users', { headers: { ...asWriter, ...json }, body, status: 400 });
  }
  await check(plain, 'POST', '/api/users', { headers: { ...asWriter, ...json }, body: { name: 'Ada', email: 'ADA@example.com' }, status: 409 });
  const created = await check(plain, 'POST', '/api/users', { headers: { ...asWriter, ...json }, body: valid, status: 201 });
  assert.equal(created.response.headers.get('Location'), `/api/users/${created.json.id}`);
});

test('a user: read, replace, patch, delete, with their conditions and failures', async () => {
  const created = await check(plain, 'POST', '/api/users', {
    headers: { ...asWriter, ...json }, body: { name: 'Mary Jackson', email: 'mary@example.com' }, status: 201,
  });
  const path = `/api/users/${created.json.id}`;
  const read = await check(plain, 'GET', path, { headers: asReader, status: 200 });
  let etag = read.response.headers.get('ETag');
  await check(plain, 'GET', path, { headers: { ...asReader, 'If-None-Match': etag }, status: 304 });
  await check(plain, 'GET', path, { headers: { ...asReader, 'If-Match': '"0"' }, status: 412 });
  await check(plain, 'GET', '/api/users/999', { headers: asReader, status: 404 });
  await check(plain, 'GET', '/api/users/07', { headers: asReader, status: 404 });
  await check(plain, 'GET', `${path}?x=1`, { headers: asReader, status: 200 }); // only the list reads a query

  const replacement = { name: 'Mary W. Jackson', email: 'mary@example.com' };
  await check(plain, 'PUT', path, { headers: { ...asReader, ...json }, body: replacement, status: 403 });
  await check(plain, 'PUT', path, { headers: { ...asWriter, 'Content-Type': 'text/plain' }, body: replacement, status: 415 });
  await check(plain, 'PUT', path, { headers: { ...asWriter, ...json, 'If-Match': '"0"' }, body: replacement, status: 412 });
  await check(plain, 'PUT', path, { headers: { ...asWriter, ...json, 'If-None-Match': '*' }, body: replacement, status: 412 });
  await check(plain, 'POST', '/api/users', { headers: { ...asWriter, ...json, 'If-None-Match': '*' }, body: replacement, status: 412 });
  await check(plain, 'PUT', path, { headers: { ...asWriter, ...json }, body: { ...replacement, id: 1 }, status: 400 });
  await check(plain, 'PUT', path, { headers: { ...asWriter, ...json }, body: { name: 'Mary' }, status: 400 });
  await check(plain, 'PUT', path, { headers: { ...asWriter, ...json }, body: { name: 'Mary', email: 'ada@example.com' }, status: 409 });
  await check(plain, 'PUT', '/api/users/999', { headers: { ...asWriter, ...json }, body: replacement, status: 404 });
  const put = await check(plain, 'PUT', path, { headers: { ...asWriter, ...json, 'If-Match': etag }, body: replacement, status: 200 });
  assert.equal(put.response.headers.get('ETag'), null, 'a PUT answer carries no ETag (RFC 9110 §9.3.4)');
  assert.equal(put.response.headers.get('Content-Location'), path);
  await check(plain, 'PUT', path, { headers: { ...asWriter, ...json, 'If-Match': etag }, body: replacement, status: 412 }); // stale now
  etag = (await check(plain, 'GET', path, { headers: asReader, status: 200 })).response.headers.get('ETag'); // read for the new one

  await check(plain, 'PATCH', path, { headers: { ...asWriter, 'Content-Type': 'application/xml' }, body: '<user/>', status: 415 });
  await check(plain, 'PATCH', path, { headers: { ...asWriter, ...mergePatch }, body: {}, status: 400 });
  await check(plain, 'PATCH', path, { headers: { ...asWriter, ...mergePatch }, body: { email: null }, status: 400 });
  await check(plain, 'PATCH', path, { headers: { ...asWriter, ...mergePatch, 'If-Match': '"0"' }, body: { name: 'M' }, status: 412 });
  const patched = await check(plain, 'PATCH', path, { headers: { ...asWriter, ...mergePatch, 'If-Match': etag }, body: { name: 'Mary Jackson' }, status: 200 });
  assert.match(patched.response.headers.get('ETag'), /^"[0-9a-f]+"$/, 'a PATCH answer carries the stored user\'s ETag');
  await check(plain, 'PATCH', path, { headers: { ...asWriter, ...mergePatch, 'Content-Encoding': 'gzip' }, body: { name: 'M' }, status: 415 });
  await check(plain, 'PATCH', path, { headers: { ...asWriter, ...json }, body: { email: 'mjackson@example.com' }, status: 200 });

  await check(plain, 'DELETE', path, { headers: asReader, status: 403 });
  await check(plain, 'DELETE', `${path}?x=1`, { headers: { ...asWriter, 'If-Match': patched.response.headers.get('ETag') }, status: 412 }); // the query ignored
  await check(plain, 'DELETE', path, { headers: asWriter, status: 204 });
  await check(plain, 'DELETE', path, { headers: asWriter, status: 404 });
});

test('with -cors-origin: preflights and answers carry the CORS headers', async () => {
  const preflight = { Origin: ORIGIN, 'Access-Control-Request-Method': 'PATCH', 'Access-Control-Request-Headers': 'authorization, content-type' };
  const answer = await check(cors, 'OPTIONS', '/api/users/1', { headers: preflight, status: 204 });
  assert.equal(answer.response.headers.get('Access-Control-Allow-Origin'), ORIGIN);
  await check(cors, 'OPTIONS', '/api/users', { headers: preflight, status: 204 });
  await check(cors, 'OPTIONS', '/', { headers: preflight, status: 204 });
  await check(cors, 'OPTIONS', '/api/users/abc', { headers: preflight, status: 204 }); // a preflight is 204 on every path under /api/
  await check(cors, 'OPTIONS', '/api/users/abc', { headers: { Origin: ORIGIN }, status: 404 }); // not a preflight
  const list = await check(cors, 'GET', '/api/users', { headers: { ...asReader, Origin: ORIGIN }, status: 200 });
  assert.equal(list.response.headers.get('Vary'), 'Origin, Authorization');
  await check(cors, 'GET', '/api/users', { headers: { Origin: ORIGIN }, status: 401 });
  await check(cors, 'GET', '/api/users', { headers: { Origin: 'http://elsewhere.example', ...asReader }, status: 200 });
  await check(cors, 'GET', '/healthz', { headers: { Origin: ORIGIN }, status: 200 });
  const asset = await check(cors, 'GET', '/assets/app.js', { headers: { Origin: ORIGIN }, status: 200 });
  assert.equal(asset.response.headers.get('Vary'), 'Origin');
  await check(cors, 'GET', '/assets/nope.js', { headers: { Origin: ORIGIN }, status: 404 });
});

// The answers the document describes in words (info.description), to paths and methods it does not
// list, sent to the service directly: Prism would answer these itself.
test('paths and methods the document does not list: answered as info.description says', async (t) => {
  const { plain: service, cors: corsService } = direct;
  const errorBody = (text) => {
    const body = JSON.parse(text);
    assert.deepEqual(Object.keys(body), ['error'], `the error body is {"error": ...}, and "fields" only for field rules: ${text}`);
    assert.equal(typeof body.error, 'string');
  };
  const send = async (base, method, path, headers, status, more = () => {}) => {
    const response = await fetch(base + path, { method, headers });
    const text = await response.text();
    assert.equal(response.status, status, `${method} ${path}: ${text}`);
    if (status !== 204) {
      assert.equal(response.headers.get('Content-Type'), 'application/json', `${method} ${path}`);
      errorBody(text);
    }
    more(response);
  };
  const allowUser = (r) => assert.deepEqual(r.headers.get('Allow').split(', ').sort(), ['DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'PUT']);
  const allowCollection = (r) => assert.deepEqual(r.headers.get('Allow').split(', ').sort(), ['GET', 'HEAD', 'OPTIONS', 'POST']);

  await t.test('a path not listed: 404, after authentication and permission', async () => {
    await send(service.url, 'GET', '/api/users/', asReader, 404);
    await send(service.url, 'GET', '/api/users/7/orders', asReader, 404);
    await send(service.url, 'GET', '/getUsers', {}, 404);
    await send(service.url, 'GET', '/api/products', {}, 401);
  });
  await t.test('a read token with a method other than GET and HEAD: 403 on any path under /api/', async () => {
    for (const [method, path] of [['DELETE', '/api/users/999'], ['DELETE', '/api/users'], ['POST', '/api/nothing'], ['TRACE', '/api/users']]) {
      await send(service.url, method, path, asReader, 403);
    }
  });
  await t.test('a method the path does not take, or no path takes: 405 with Allow, never 501', async () => {
    await send(service.url, 'DELETE', '/api/users', asWriter, 405, allowCollection);
    await send(service.url, 'POST', '/api/users/7', asWriter, 405, allowUser);
    await send(service.url, 'FOO', '/api/users/7', asWriter, 405, allowUser);
    await send(service.url, 'TRACE', '/api/users', asWriter, 405, allowCollection);
    await send(service.url, 'POST', '/', {}, 405);
  });
  await t.test('with -cors-origin, a preflight is 204 on every path under /api/, listed or not', async () => {
    const preflight = { Origin: ORIGIN, 'Access-Control-Request-Method': 'DELETE', 'Access-Control-Request-Headers': 'authorization' };
    for (const path of ['/api/users/undefined', '/api/nothing', '/api/users/']) {
      await send(corsService.url, 'OPTIONS', path, preflight, 204, (r) => assert.equal(r.headers.get('Access-Control-Allow-Origin'), ORIGIN));
    }
    await send(corsService.url, 'OPTIONS', '/nothing', preflight, 404, (r) => assert.equal(r.headers.get('Access-Control-Allow-Origin'), ORIGIN));
    // The request the preflight let through then gets the real JSON answer, which the page can read.
    await send(corsService.url, 'GET', '/api/users/undefined', { ...asReader, Origin: ORIGIN }, 404,
      (r) => assert.equal(r.headers.get('Access-Control-Allow-Origin'), ORIGIN));
  });
});
