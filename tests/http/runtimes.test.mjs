// The web build (wasm-bindgen --target web) in the other runtimes: headless Debian Chromium
// (driven by playwright-core) loading a page from nginx, reading tables from nginx and,
// through presigned URLs signed in this Node process, from moto's S3; and workerd running a
// worker module that reads from moto with SigV4. Same fixture expectations as Node.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, cpSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { CHROMIUM, requireBinary, tempDir } from '../lib/harness.mjs';

import { sameRows } from '../js/fixture_checks.mjs';
import { repo, fixtures, tablesDir, startNginx, startMoto, startWorkerd, S3_CREDS, BUCKET, wasmWeb, wasmNode } from './servers.mjs';
import { presigner } from './sigv4.mjs';
import { startCountingProxy } from './counting_proxy.mjs';
import { createRequire } from 'node:module';

const exp = (name) => JSON.parse(readFileSync(join(fixtures, 'expected', `${name}.json`), 'utf8'));
const CORE = [
  'sample_table/cow/v6_complexkeygen_hivestyle',
  'sample_table/cow/v9_txns_simple_meta',
  'sample_table/mor/parquet/v6_simplekeygen_nonhivestyle',
  'sample_table/mor/avro/v9_txns_simple_meta',
];

let tables, nginx, moto, workerd, browser, page, nginxSeen, motoSeen;
const { WasmTable: NodeTable } = createRequire(import.meta.url)(join(wasmNode, 'hudi_edge.js'));
const pageErrors = [];

const WORKER = `
import { initSync, WasmTable } from './hudi_edge.js';
import wasm from './hudi_edge_bg.wasm';
import { readRows } from './fixture_checks.mjs';
initSync({ module: wasm });
export default {
  async fetch(request, env) {
    const u = new URL(request.url);
    if (u.pathname === '/health') return new Response('ok');
    const name = u.searchParams.get('table');
    try {
      const s3 = { region: env.REGION, endpoint: env.ENDPOINT, accessKeyId: env.KEY_ID, secretAccessKey: env.SECRET, forcePathStyle: true };
      const table = await WasmTable.openUrl('s3://' + env.BUCKET + '/' + name, { s3 });
      const opened = table.io();
      const rows = await readRows(table, {});
      return Response.json({ rows, opened, io: table.io() });
    } catch (e) {
      return Response.json({ error: String(e && e.message || e), code: e && e.code }, { status: 500 });
    }
  },
};
`;

before(async () => {
  tables = tablesDir();
  // The page and the web build, served by the same nginx as the tables (same origin).
  const app = tempDir('app');
  cpSync(wasmWeb, join(app, 'wasm'), { recursive: true });
  cpSync(join(repo, 'tests', 'js', 'fixture_checks.mjs'), join(app, 'fixture_checks.mjs'));
  writeFileSync(
    join(app, 'index.html'),
    `<!doctype html><meta charset="utf-8"><title>hudi-edge</title>
<script type="module">
import init, { WasmTable } from './wasm/hudi_edge.js';
import * as checks from './fixture_checks.mjs';
await init();
window.WasmTable = WasmTable;
window.checks = checks;
window.hudiReady = true;
</script>`,
  );
  [nginx, moto] = await Promise.all([startNginx(tables, { '/_app/': app }), startMoto(tables)]);
  // Every runtime reaches the servers through counting proxies: the server side's count.
  [nginxSeen, motoSeen] = await Promise.all([startCountingProxy(nginx.url), startCountingProxy(moto.url)]);
  workerd = await startWorkerd(WORKER, { BUCKET, ENDPOINT: motoSeen.url, REGION: S3_CREDS.region, KEY_ID: S3_CREDS.accessKeyId, SECRET: S3_CREDS.secretAccessKey });
  browser = await chromium.launchPersistentContext(tempDir('chromium'), {
    executablePath: requireBinary(CHROMIUM, 'Chromium', 'HUDI_EDGE_CHROMIUM'),
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    timeout: 60_000,
  });
  page = await browser.newPage();
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  const sign = presigner({ endpoint: motoSeen.url, bucket: BUCKET, creds: S3_CREDS });
  await page.exposeFunction('presignOnServer', (method, key, p) => sign(method, key, p ?? undefined));
  await page.goto(`${nginxSeen.url}/_app/index.html`);
  await page.waitForFunction(() => window.hudiReady === true, null, { timeout: 60_000 });
});

after(async () => {
  await browser?.close();
  await Promise.all([nginx?.stop(), moto?.stop(), workerd?.stop(), nginxSeen?.stop(), motoSeen?.stop()]);
  assert.deepEqual(pageErrors, [], 'no uncaught errors or unhandled rejections in the page');
});

async function inPage(url, presigned) {
  return page.evaluate(
    async ([url, presigned]) => {
      try {
        const presign = presigned ? (m, k, p) => window.presignOnServer(m, k, p ?? null) : undefined;
        const table = await window.WasmTable.openUrl(url, {}, undefined, presign);
        const opened = table.io();
        const rows = await window.checks.readRows(table, {});
        return { rows, opened, io: table.io() };
      } catch (e) {
        return { error: String(e.message ?? e), code: e.code };
      }
    },
    [url, presigned],
  );
}

const costs = {};
// What the server saw, split into listings (ListObjectsV2, a JSON index, the manifest) and
// object reads.
const isListing = (e) => e.path.endsWith('/') || e.path.endsWith('hudi-edge-manifest.json') || /list-type=2/.test(e.query ?? '');
// A browser's CORS preflights (OPTIONS) are its own, not the engine's: counted apart.
const served = (seen) => {
  const asked = seen.log.filter((e) => e.method !== 'OPTIONS');
  return { listings: asked.filter(isListing).length, objects: asked.filter((e) => !isListing(e)).length };
};
const preflights = (seen) => seen.log.filter((e) => e.method === 'OPTIONS').length;
const s3Options = () => ({ s3: { region: S3_CREDS.region, endpoint: motoSeen.url, accessKeyId: S3_CREDS.accessKeyId, secretAccessKey: S3_CREDS.secretAccessKey, forcePathStyle: true } });

/// The same open + snapshot by the Node build through the same proxy: the count every other
/// runtime must match.
async function nodeBaseline(seen, open) {
  seen.reset();
  const table = await open();
  await table.readJson({}, true);
  table.free();
  return served(seen);
}

// At most this many requests for open + snapshot of a CORE table on any path (the largest,
// the v9 MOR table planned by its metadata table, bounded in node.test.mjs).
const REQUESTS_MAX = 36;

/// What the server saw from a runtime equals what it saw from the Node build, request kind for
/// request kind, under the bound. (io() is not the reference: it can count a listing that
/// waited for another's manifest fetch, and miss a presigned manifest probe answered 404.)
function sameCost(what, seen, io, baseline) {
  const got = served(seen);
  costs[what] = { requests: io.requests, round_trips: io.roundTrips, bytes: io.bytes, server_saw: got.objects + got.listings, cors_preflights: preflights(seen) };
  assert.deepEqual(got, baseline, `${what}: the server saw what it sees from the Node build`);
  assert.ok(got.objects + got.listings <= REQUESTS_MAX, `${what}: the server saw ${got.objects + got.listings} requests (at most ${REQUESTS_MAX})`);
}

for (const name of CORE) {
  test(`nginx→chromium: ${name}`, async () => {
    const url = `${nginxSeen.url}/${name}`;
    const baseline = await nodeBaseline(nginxSeen, () => NodeTable.openUrl(url, {}));
    nginxSeen.reset();
    const r = await inPage(url, false);
    assert.equal(r.error, undefined, r.error);
    sameRows(name, exp(name), r.rows, exp(name).snapshot.rows, 'snapshot');
    sameCost(`nginx→chromium ${name}`, nginxSeen, r.io, baseline);
  });
  test(`presigned→chromium: ${name}`, async () => {
    const sign = presigner({ endpoint: motoSeen.url, bucket: BUCKET, creds: S3_CREDS });
    const baseline = await nodeBaseline(motoSeen, () => NodeTable.openUrl(`s3://${BUCKET}/${name}`, {}, undefined, (m, k, p) => sign(m, k, p ?? undefined)));
    motoSeen.reset();
    const r = await inPage(`s3://${BUCKET}/${name}`, true);
    assert.equal(r.error, undefined, r.error);
    sameRows(name, exp(name), r.rows, exp(name).snapshot.rows, 'snapshot');
    sameCost(`presigned→chromium ${name}`, motoSeen, r.io, baseline);
  });
  test(`s3→workerd: ${name}`, async () => {
    const baseline = await nodeBaseline(motoSeen, () => NodeTable.openUrl(`s3://${BUCKET}/${name}`, s3Options()));
    motoSeen.reset();
    const res = await fetch(`${workerd.url}/?table=${encodeURIComponent(name)}`);
    const r = await res.json();
    assert.equal(r.error, undefined, `${r.code}: ${r.error}\n${workerd.log().slice(-2000)}`);
    sameRows(name, exp(name), r.rows, exp(name).snapshot.rows, 'snapshot');
    sameCost(`s3→workerd ${name}`, motoSeen, r.io, baseline);
  });
}

test('chromium: an aborted read rejects with ABORTED, no unhandled rejection', async () => {
  const name = CORE[1];
  const r = await page.evaluate(async (url) => {
    const table = await window.WasmTable.openUrl(url, {});
    const controller = new AbortController();
    const reading = table.readArrow({}, controller.signal);
    controller.abort();
    try {
      await reading;
      return { code: 'NOT_ABORTED' };
    } catch (e) {
      return { code: e.code };
    }
  }, `${nginxSeen.url}/${name}`);
  assert.equal(r.code, 'ABORTED');
  // A late rejection would surface as a page error while the page does more work: a full read.
  const after = await inPage(`${nginxSeen.url}/${CORE[0]}`, false);
  assert.equal(after.error, undefined, after.error);
  assert.deepEqual(pageErrors, [], 'no uncaught errors or unhandled rejections after the abort');
});

test('costs per runtime path (bounded above, in each runtime test, by what the server saw)', () => {
  assert.equal(Object.keys(costs).length, CORE.length * 3, 'every runtime path was measured');
  console.log(`open+snapshot cost by runtime: ${JSON.stringify(costs, null, 1)}`);
});
