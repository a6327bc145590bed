// What the conformance kit finds in json-server 0.17.4, a real API no one here wrote, described by
// json-server/posts.json: its /posts, with integer ids, as json-server serves them from a data file.
// The kit must run to the end, with no exit status 2, and its results are pinned here, those of the
// must and should rules and the others: a change to the kit or to json-server that changes one
// shows up. docs/kit.md shows this report as what the kit finds in the wild, and its last line is
// checked against the run's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { requireEnv, startJSONServer } from './services.mjs';

const DESCRIPTION = new URL('./json-server/posts.json', import.meta.url).pathname;
const DATA = new URL('./json-server/db.json', import.meta.url).pathname;
const DOCS = new URL('../docs/kit.md', import.meta.url).pathname;

// PINNED are the rules against json-server, of every tier, by what became of them, in the kit's order.
const PINNED = {
  failed: [
    'reachable/content-type-json', 'create/201-etag', 'create/invalid-refused', 'read/etag', 'list/bad-sort-400',
    'list/bad-page-400', 'list/bad-size-400', 'list/unknown-parameter-400', 'replace/invalid-refused',
    'replace/no-etag', 'patch/merge-patch-media-type', 'patch/options-accept-patch', 'patch/etag', 'delete/204',
    'errors/error-body', 'errors/method-not-allowed-405', 'errors/405-allow', 'precondition/if-match-412',
    'precondition/if-match-current-goes-ahead', 'precondition/if-match-strong', 'precondition/if-match-list',
    'precondition/if-match-on-reads', 'precondition/if-match-on-patch', 'precondition/304-headers',
    'precondition/if-none-match-on-writes-412', 'precondition/if-none-match-on-patch-412',
    'precondition/if-match-before-if-none-match',
  ],
  skipped: [
    'auth/no-token-401', 'auth/unknown-token-401', 'auth/other-scheme-401', 'auth/401-www-authenticate',
    'auth/no-token-challenge-without-error', 'auth/invalid-token-error', 'auth/empty-authorization-is-no-token',
    'auth/challenge-realm', 'auth/scheme-any-case', 'auth/several-spaces', 'auth/token-not-echoed',
    'auth/write-token-reads', 'auth/read-token-reads', 'auth/read-token-write-403', 'auth/read-token-patch-403',
    'auth/read-token-reads-an-item', 'auth/patch-without-token-401', 'auth/403-insufficient-scope',
    'list/total-is-length', 'patch/415-accept-patch', 'unique/taken-409', 'unique/taken-on-replace-409',
    'unique/taken-on-patch-409', 'unique/own-value-kept', 'unique/delete-frees-the-value', 'errors/error-message',
    'errors/authentication-first', 'errors/permission-before-routing', 'errors/permission-before-the-request',
    'errors/content-encoding-accept-encoding', 'precondition/list-over-several-lines',
    'precondition/if-match-on-post', 'precondition/if-match-on-post-current',
    'precondition/if-none-match-on-post-412', 'precondition/412-before-409',
  ],
  passed: [
    'reachable/list-200', 'create/201', 'create/201-body-is-the-item', 'create/201-location',
    'create/location-reads-back', 'create/each-post-a-new-item', 'create/syntax-error-400',
    'create/charset-utf-8-taken', 'create/media-type-any-case', 'read/200-item', 'read/missing-404', 'read/head-200',
    'read/head-no-body', 'read/head-same-headers', 'read/etag-follows-the-item', 'list/envelope',
    'list/holds-created-item', 'list/empty-is-an-array', 'list/filter-matches', 'list/filters-combine',
    'list/sort-by-id', 'list/sort-by-each-key', 'list/sort-ties-by-id', 'list/page-slice',
    'list/pages-of-the-whole-list', 'list/page-total-counts-matches', 'list/link-relations',
    'list/link-next-visits-each-once', 'list/link-keeps-the-query', 'list/304-carries-link', 'replace/200-item',
    'replace/stored', 'replace/idempotent', 'patch/merges', 'delete/gone', 'delete/again-404',
    'errors/verb-paths-404', 'precondition/if-match-star', 'precondition/if-none-match-304',
    'precondition/if-none-match-weak', 'precondition/if-none-match-star-304', 'precondition/if-none-match-other-200',
    'precondition/304-no-body', 'precondition/if-none-match-other-goes-ahead', 'precondition/missing-item-404',
    'precondition/star-only-as-the-whole-value', 'cors/allow-origin', 'cors/preflight',
    'cors/preflight-allows-the-method', 'cors/preflight-allows-authorization', 'cors/vary-origin',
  ],
};

// runKit runs the kit's binary (built by run.sh) and returns its exit status and output.
async function runKit(args) {
  const kit = spawn(requireEnv('KIT_BIN'), args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  kit.stdout.setEncoding('utf8').on('data', (chunk) => { stdout += chunk; });
  kit.stderr.setEncoding('utf8').on('data', (chunk) => { stderr += chunk; });
  const [status] = await once(kit, 'exit');
  return { status, stdout, stderr };
}

test('the kit runs against json-server to the end, and finds what it breaks', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kit-json-server-'));
  copyFileSync(DATA, join(dir, 'db.json')); // json-server rewrites its data file: a copy, each run
  const server = await startJSONServer(join(dir, 'db.json'));
  try {
    const report = join(dir, 'report.json');
    const { status, stdout, stderr } = await runKit(['-url', server.url, '-resource', DESCRIPTION, '-json', report]);
    assert.equal(status, 1, `exit status 1, a rule failed, not 0 or 2 (the run could not proceed):\n${stdout}\n${stderr}`);
    assert.equal(stderr, '', 'the kit deleted every item it created');
    const results = JSON.parse(readFileSync(report, 'utf8')).results;
    const pinned = { failed: [], skipped: [], passed: [] };
    for (const r of results) pinned[r.status].push(r.id);
    assert.deepEqual(pinned, PINNED, 'the results of the rules');
    const counts = stdout.trim().split('\n').at(-1);
    assert.ok(readFileSync(DOCS, 'utf8').includes(`\n${counts}\n`), `docs/kit.md shows another report: this run's ends "${counts}"`);
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
