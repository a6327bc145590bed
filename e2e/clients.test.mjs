// Does the document the service serves work in the tools people feed it to? Each check below
// takes GET /openapi.json from a running binary (the document as served, which is the file byte for
// byte, over HTTP and over HTTPS) and hands it to a tool independent of this repository. The
// document's server URL is relative ("/"), so each tool is given the server's URL explicitly, the
// way its own documentation says:
//
// - A typed client. openapi-typescript generates TypeScript types from the document, and
//   typed-client.ts uses them with openapi-fetch (createClient's baseUrl): create, read, 304,
//   If-Match (412, then 200), a PUT answered without an ETag and the read for it, merge-patch,
//   409, 400 with fields, 403 and delete. tsc --strict must accept the program, and the program
//   must get every status it expects from the real server, over HTTP and over HTTPS.
// - The names a generator exports. Exported at the top level, no schema may take the name of a
//   JavaScript global (Error, Response, URL...): a program that imports it would hide the global.
// - Postman. openapi-to-postmanv2 converts the document into a collection whose requests carry the
//   document's examples and whose baseUrl variable is the document's relative server URL; newman
//   runs it with baseUrl set to a fresh server started with -sample-data and -tls-cert (as a
//   Postman user sets the variable in an environment): every request must get its operation's
//   success status.
import { before, after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import newman from 'newman';
import Converter from 'openapi-to-postmanv2';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { READ_TOKEN, WRITE_TOKEN, requireEnv, startService } from './services.mjs';

const NODE_MODULES = new URL('./node_modules', import.meta.url).pathname;
const TSC = new URL('./node_modules/typescript/bin/tsc', import.meta.url).pathname;

// The compiler's settings for the typed client, in the temporary folder it is built in:
// - strict: every check tsc has; the point of this test.
// - NodeNext and package.json's "type": "module": ES modules as Node runs them (top-level await).
// - lib ES2022 and DOM: the standard fetch API (Request, Response, Headers) that openapi-fetch's
//   types are written against, and that Node has too.
// - types []: no @types package from node_modules (Prism brings @types/node), so the program sees
//   only what it imports.
// It is compiled to JavaScript, not run as TypeScript: Node 20 cannot strip types (Node 22.6 has
// --experimental-strip-types), and stripping would not check them anyway.
const TSCONFIG = {
  compilerOptions: {
    strict: true,
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    lib: ['ES2022', 'DOM'],
    types: [],
    outDir: 'out',
  },
  files: ['typed-client.ts'],
};

const FILE = new URL('../web/openapi.json', import.meta.url);
const TLS = () => ['-tls-cert', requireEnv('TLS_CERT'), '-tls-key', requireEnv('TLS_KEY')];

let service; // one server over HTTP and one over HTTPS for the typed client; the Postman run gets a fresh one
let secure;
let document; // GET /openapi.json of the first
let work; // a temporary folder for generated files

before(async () => {
  service = await startService();
  secure = await startService(TLS());
  assert.match(secure.url, /^https:\/\//, 'the start-up log does not name an https URL');
  document = await servedDocument(service);
  work = await mkdtemp(join(tmpdir(), 'users-clients-'));
});

after(async () => {
  await service?.stop();
  await secure?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

// servedBytes is GET /openapi.json of a server, as it came (fetched over HTTPS from a -tls-cert one).
async function servedBytes(server) {
  const response = await fetch(`${server.url}/openapi.json`);
  assert.equal(response.status, 200, 'GET /openapi.json');
  return Buffer.from(await response.arrayBuffer());
}

const servedDocument = async (server) => JSON.parse(await servedBytes(server));

test('/openapi.json is the file byte for byte, over HTTP and HTTPS, and its server URL is relative', async () => {
  const file = await readFile(FILE);
  for (const server of [service, secure]) {
    assert.ok((await servedBytes(server)).equals(file), `${server.url}/openapi.json is not web/openapi.json as it is`);
  }
  assert.deepEqual(document.servers.map((s) => s.url), ['/'], 'one server, relative: the one that serves the document');
});

// run runs a program to its end (60 s at most) and gives its exit status and all it printed.
function run(command, args, { env = process.env } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 });
    let output = '';
    child.stdout.on('data', (chunk) => { output += chunk; });
    child.stderr.on('data', (chunk) => { output += chunk; });
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal, output }));
  });
}

test('a typed client generated from the document: tsc --strict accepts it, and it gets every status it expects, over HTTP and HTTPS', async (t) => {
  const dir = join(work, 'client');
  await mkdir(dir);
  // The types, as `npx openapi-typescript http://HOST/openapi.json -o api.ts` would write them.
  await writeFile(join(dir, 'api.ts'), astToString(await openapiTS(JSON.stringify(document))));
  await copyFile(new URL('./typed-client.ts', import.meta.url), join(dir, 'typed-client.ts'));
  await writeFile(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
  await writeFile(join(dir, 'tsconfig.json'), JSON.stringify(TSCONFIG, null, 2));
  await symlink(NODE_MODULES, join(dir, 'node_modules')); // openapi-fetch, for tsc and for Node

  const typeCheck = await run(process.execPath, [TSC, '--project', dir, '--noEmit']);
  assert.equal(typeCheck.code, 0, `tsc --strict --noEmit found type errors:\n${typeCheck.output}`);
  const build = await run(process.execPath, [TSC, '--project', dir]);
  assert.equal(build.code, 0, `tsc could not compile the client:\n${build.output}`);

  for (const server of [service, secure]) { // each its own sample users: the program runs once on each
    const client = await run(process.execPath, [join(dir, 'out', 'typed-client.js')], {
      env: { ...process.env, BASE_URL: server.url, WRITE_TOKEN, READ_TOKEN }, // NODE_EXTRA_CA_CERTS: run.sh's certificate
    });
    assert.equal(client.code, 0, `the typed client stopped, at ${server.url}:\n${client.output}`);
    t.diagnostic(`the typed client got, at ${server.url}:\n${client.output.trimEnd()}`);
  }
});

// exportedNames generates the types with every schema also exported at the top level under its
// own name (User, ErrorBody), as most client generators name their models, and gives the names the
// module exports, as TypeScript sees them. (--root-types alone would export SchemaUser and
// SchemaErrorBody, names no global has; --root-types-no-schema-prefix drops that prefix.)
async function exportedNames(openapi, name) {
  const file = join(work, `${name}.ts`);
  const options = { rootTypes: true, rootTypesNoSchemaPrefix: true }; // --root-types --root-types-no-schema-prefix
  await writeFile(file, astToString(await openapiTS(JSON.stringify(openapi), options)));
  const program = ts.createProgram([file], { noLib: true, noResolve: true });
  const checker = program.getTypeChecker();
  return checker.getExportsOfModule(checker.getSymbolAtLocation(program.getSourceFile(file))).map((s) => s.name);
}

// globalsTaken lists the names that are also globals of JavaScript as this Node has them.
function globalsTaken(names) {
  const globals = new Set(Object.getOwnPropertyNames(globalThis));
  return names.filter((name) => globals.has(name));
}

test('the generated module exports no name that is a JavaScript global', async () => {
  const names = await exportedNames(document, 'root-types');
  assert.ok(names.includes('User'), `the schemas are not exported at the top level: ${names}`);
  assert.deepEqual(globalsTaken(names), [], 'exported names that hide a global of the same name');

  // The check can fail: with the error schema under its old name, Error, it does.
  const renamed = JSON.parse(JSON.stringify(document).replaceAll('"#/components/schemas/ErrorBody"', '"#/components/schemas/Error"'));
  const { ErrorBody, ...others } = renamed.components.schemas;
  renamed.components.schemas = { ...others, Error: ErrorBody };
  assert.deepEqual(globalsTaken(await exportedNames(renamed, 'renamed')), ['Error']);
});

// postmanCollection converts a document as Postman's importer does (openapi-to-postmanv2's v2
// interface, which Postman uses): parametersResolution "Example" fills every parameter and body
// from the document's examples instead of placeholders such as <string>.
async function postmanCollection(openapi) {
  const converted = await promisify(Converter.convertV2)({ type: 'json', data: structuredClone(openapi) },
    { parametersResolution: 'Example' });
  assert.ok(converted.result, `the converter refused the document: ${converted.reason}`);
  return converted.output[0].data;
}

// successStatus is the status an operation answers when all goes well: the lowest 2xx it lists.
function successStatus(operation) {
  return Math.min(...Object.keys(operation.responses).filter((status) => /^2\d\d$/.test(status)).map(Number));
}

test('Postman: the collection converted from the document, with its examples, run by newman on a fresh HTTPS server', async (t) => {
  const fresh = await startService(TLS()); // -sample-data: the users the examples aim at
  t.after(() => fresh.stop());
  const served = await servedDocument(fresh); // fetched over HTTPS

  const collection = await postmanCollection(served);

  await t.test('as imported, the collection\'s baseUrl is the document\'s relative server URL, to be set to the server', () => {
    assert.deepEqual(collection.variable.map((v) => [v.key, v.value]), [['baseUrl', '/']]);
    const first = collection.item.flatMap(function leaves(i) { return i.item ? i.item.flatMap(leaves) : [i]; })[0];
    assert.deepEqual(first.request.url.host, ['{{baseUrl}}'], 'each request starts with {{baseUrl}}');
  });

  await t.test('every request gets its operation\'s success status', async () => {
    // The document's bearerAuth scheme becomes the collection's bearer auth, with the token in a variable.
    assert.equal(collection.auth?.type, 'bearer');
    const token = /^\{\{(\w+)\}\}$/.exec(collection.auth.bearer.find((entry) => entry.key === 'token')?.value ?? '');
    assert.ok(token, `the bearer token is not a variable: ${JSON.stringify(collection.auth)}`);

    // Variables given to the run (its environment) take precedence over the collection's own:
    // baseUrl points the whole collection at the server under test, as a Postman user sets it in an
    // environment (newman --env-var baseUrl=https://...). The server's certificate is run.sh's,
    // which Node.js trusts through NODE_EXTRA_CA_CERTS.
    const summary = await promisify(newman.run)({
      collection,
      envVar: [{ key: 'baseUrl', value: fresh.url }, { key: token[1], value: WRITE_TOKEN }],
      reporters: [],
      timeoutRequest: 10_000,
    });

    // Each request is matched to its operation by method and path (:id in Postman is {id}).
    const notRun = new Set();
    for (const [path, item] of Object.entries(served.paths)) {
      for (const method of Object.keys(item).filter((key) => key !== 'parameters')) notRun.add(`${method.toUpperCase()} ${path}`);
    }
    const wrong = [];
    for (const { item, request, response, requestError } of summary.run.executions) {
      const path = '/' + item.request.url.path.map((part) => part.replace(/^:(.+)$/, '{$1}')).join('/');
      const operation = served.paths[path]?.[request.method.toLowerCase()];
      const what = `${request.method} ${request.url} (${item.name})`;
      if (!operation) {
        wrong.push(`${what}: no such operation in the document`);
        continue;
      }
      notRun.delete(`${request.method} ${path}`);
      const want = successStatus(operation);
      const got = response ? response.code : `no answer (${requestError?.message})`;
      if (got !== want) wrong.push(`${what}: got ${got}, want ${want}`);
    }
    assert.deepEqual(wrong, [], 'requests of the collection that did not get their success status');
    assert.deepEqual([...notRun], [], 'operations of the document that the collection does not send');
  });
});
