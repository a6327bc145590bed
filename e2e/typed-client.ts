// A program that uses this API the way an application would: through a client generated from the
// served OpenAPI document, with every path, parameter, body and answer typed from it.
//
// It is not run from here. clients.test.mjs copies it into a temporary folder beside api.ts (the
// types openapi-typescript generated from GET /openapi.json of a running server), type-checks both
// with tsc --strict, compiles them and runs the result against that server. A wrong type is a tsc
// error; a wrong status stops the program with an exception, so its exit status is 1.
import createClient from 'openapi-fetch';
import type { components, paths } from './api.js';

// The error body every failure has, under the name the document gives its schema.
type ErrorBody = components['schemas']['ErrorBody'];

// Node's own types (@types/node) are left out on purpose, so that the program sees only the
// standard fetch API and what the document generated; this is all it needs of `process`.
declare const process: { env: Record<string, string | undefined> };

function setting(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

// The document's server URL is relative ("/"), so a client generated from it is given the server's
// URL, as openapi-fetch's createClient takes it: baseUrl.
const baseUrl = setting('BASE_URL'); // http:// or https://127.0.0.1:PORT of the server under test
const writer = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${setting('WRITE_TOKEN')}` } });
const reader = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${setting('READ_TOKEN')}` } });

// expect stops the program when an answer does not have the status this step should get.
function expect(step: string, response: Response, status: number): void {
  if (response.status !== status) throw new Error(`${step}: got ${response.status}, want ${status}`);
  console.log(`${step}: ${status}`);
}

function check(step: string, ok: boolean, what: string): void {
  if (!ok) throw new Error(`${step}: ${what}`);
}

// Create: 201, the user in the body, its address in Location.
const created = await writer.POST('/api/users', { body: { name: 'Dorothy Vaughan', email: 'dorothy@example.com' } });
expect('create', created.response, 201);
if (!created.data) throw new Error('create: no body');
const id = created.data.id; // a number: the document says integer
check('create', created.response.headers.get('Location') === `/api/users/${id}`, 'Location is not the new user');

// Read: 200, with an ETag that names this version of the user.
const read = await reader.GET('/api/users/{id}', { params: { path: { id } } });
expect('read', read.response, 200);
check('read', read.data?.email === 'dorothy@example.com', 'not the user created');
const etag = read.response.headers.get('ETag');
if (!etag) throw new Error('read: no ETag');

// Read again with that ETag in If-None-Match: 304, the user has not changed.
const unchanged = await reader.GET('/api/users/{id}', { params: { path: { id }, header: { 'If-None-Match': etag } } });
expect('read with If-None-Match', unchanged.response, 304);

// Replace with an If-Match that is not the user's ETag: 412, nothing changes. Then with the ETag
// just read: 200, the user as stored, and where it is stored (Content-Location).
const replacement = { name: '  Dorothy Johnson Vaughan ', email: 'dorothy@example.com' };
const stale = await writer.PUT('/api/users/{id}', {
  params: { path: { id }, header: { 'If-Match': '"0000000000000000"' } },
  body: replacement,
});
expect('replace with a stale If-Match', stale.response, 412);
const replaced = await writer.PUT('/api/users/{id}', { params: { path: { id }, header: { 'If-Match': etag } }, body: replacement });
expect('replace with the current If-Match', replaced.response, 200);
check('replace', replaced.data?.name === 'Dorothy Johnson Vaughan', `the name was not stored trimmed: ${JSON.stringify(replaced.data)}`);
check('replace', replaced.response.headers.get('Content-Location') === `/api/users/${id}`, 'Content-Location is not the user');

// A PUT answer carries no ETag (RFC 9110 §9.3.4): what the server stores, trimmed and with the id,
// is not the body sent. So the client reads the user for the ETag its next change sends; the one
// it had before the PUT is stale now.
check('replace', !replaced.response.headers.has('ETag'), 'a PUT answer carries an ETag');
const reread = await reader.GET('/api/users/{id}', { params: { path: { id } } });
expect('read after the replace, for its ETag', reread.response, 200);
const newEtag = reread.response.headers.get('ETag');
if (!newEtag) throw new Error('read after the replace: no ETag');
check('read after the replace', newEtag !== etag, 'the ETag did not change with the user');
const old = await writer.PUT('/api/users/{id}', { params: { path: { id }, header: { 'If-Match': etag } }, body: replacement });
expect('replace again with the ETag read before the replace', old.response, 412);

// Change one field with a JSON Merge Patch: the other fields are kept.
const patched = await writer.PATCH('/api/users/{id}', {
  params: { path: { id }, header: { 'If-Match': newEtag } },
  headers: { 'Content-Type': 'application/merge-patch+json' },
  body: { name: 'Dorothy Vaughan' },
});
expect('merge-patch the name', patched.response, 200);
check('merge-patch', patched.data?.name === 'Dorothy Vaughan' && patched.data.email === 'dorothy@example.com',
  `the patch changed more or less than the name: ${JSON.stringify(patched.data)}`);

// A PATCH answer does carry the stored user's ETag: the next change can send it without reading.
const patchedEtag = patched.response.headers.get('ETag');
if (!patchedEtag) throw new Error('merge-patch: no ETag');
const again = await writer.PATCH('/api/users/{id}', {
  params: { path: { id }, header: { 'If-Match': patchedEtag } },
  headers: { 'Content-Type': 'application/merge-patch+json' },
  body: { email: 'dorothy.vaughan@example.com' },
});
expect('merge-patch again with the ETag of the last answer', again.response, 200);

// Create with an e-mail that a sample user has: 409.
const taken = await writer.POST('/api/users', { body: { name: 'Another Ada', email: 'ada@example.com' } });
expect('create with a taken e-mail', taken.response, 409);

// Create with two bad fields: 400, and the error body names each, for a form to show beside it.
// The error is read through the generated type: a document whose error schema lost `fields`, or
// was renamed, fails here at compile time.
const invalid = await writer.POST('/api/users', { body: { name: '', email: 'not an e-mail' } });
expect('create with bad fields', invalid.response, 400);
const problem: ErrorBody | undefined = invalid.error;
check('create with bad fields', Boolean(problem?.fields?.name && problem.fields.email),
  `the error does not name both fields: ${JSON.stringify(problem)}`);

// A write with the read token: 403.
const forbidden = await reader.DELETE('/api/users/{id}', { params: { path: { id } } });
expect('delete with the read token', forbidden.response, 403);

// Delete: 204, and then the user is gone: 404.
const deleted = await writer.DELETE('/api/users/{id}', { params: { path: { id } } });
expect('delete', deleted.response, 204);
const gone = await reader.GET('/api/users/{id}', { params: { path: { id } } });
expect('read after delete', gone.response, 404);
