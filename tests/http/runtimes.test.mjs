// The web build (wasm-bindgen --target web) in the other runtimes: headless Debian Chromium
// (driven by playwright-core) loading a page from nginx, reading tables from nginx and,
// through presigned URLs signed in this Node process, from moto's S3; and workerd running a
// worker module that reads from moto with SigV4. Same fixture expectations as Node.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, mkdirSync, cpSync, writeFileSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { chromium } from 'playwright-core';

import { sameRows } from '../js/fixture_checks.mjs';
import { repo, fixtures, tablesDir, writeManifests, startNginx, startMoto, startWorkerd, S3_CREDS, BUCKET, wasmWeb } from './servers.mjs';
import { presigner } from './sigv4.mjs';

const exp = (name) => JSON.parse(readFileSync(join(fixtures, 'expected', `${name}.json`), 'utf8'));
const CORE = [
  'sample_table/cow/v6_complexkeygen_hivestyle',
  'sample_table/cow/v9_txns_simple_meta',
  'sample_table/mor/parquet/v6_simplekeygen_nonhivestyle',
  'sample_table/mor/avro/v9_txns_simple_meta',
];

let tables, nginx, moto, workerd, browser, page;
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
  writeManifests(tables);
  // The page and the web build, served by the same nginx as the tables (same origin).
  const app = join(tables, '_app');
  mkdirSync(app, { recursive: true });
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
  [nginx, moto] = await Promise.all([startNginx(tables), startMoto(tables)]);
  workerd = await startWorkerd(WORKER, { BUCKET, ENDPOINT: moto.url, REGION: S3_CREDS.region, KEY_ID: S3_CREDS.accessKeyId, SECRET: S3_CREDS.secretAccessKey });
  browser = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'hudi-edge-chromium-')), {
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    timeout: 60_000,
  });
  page = await browser.newPage();
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  const sign = presigner({ endpoint: moto.url, bucket: BUCKET, creds: S3_CREDS });
  await page.exposeFunction('presignOnServer', (method, key, p) => sign(method, key, p ?? undefined));
  await page.goto(`${nginx.url}/_app/index.html`);
  await page.waitForFunction(() => window.hudiReady === true, null, { timeout: 60_000 });
});

after(async () => {
  await browser?.close();
  await Promise.all([nginx?.stop(), moto?.stop(), workerd?.stop()]);
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
for (const name of CORE) {
  test(`nginx→chromium: ${name}`, async () => {
    const r = await inPage(`${nginx.url}/${name}`, false);
    assert.equal(r.error, undefined, r.error);
    sameRows(name, exp(name), r.rows, exp(name).snapshot.rows, 'snapshot');
    costs[`nginx→chromium ${name}`] = r.io;
  });
  test(`presigned→chromium: ${name}`, async () => {
    const r = await inPage(`s3://${BUCKET}/${name}`, true);
    assert.equal(r.error, undefined, r.error);
    sameRows(name, exp(name), r.rows, exp(name).snapshot.rows, 'snapshot');
    costs[`presigned→chromium ${name}`] = r.io;
  });
  test(`s3→workerd: ${name}`, async () => {
    const res = await fetch(`${workerd.url}/?table=${encodeURIComponent(name)}`);
    const r = await res.json();
    assert.equal(r.error, undefined, `${r.code}: ${r.error}\n${workerd.log().slice(-2000)}`);
    sameRows(name, exp(name), r.rows, exp(name).snapshot.rows, 'snapshot');
    costs[`s3→workerd ${name}`] = r.io;
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
  }, `${nginx.url}/${name}`);
  assert.equal(r.code, 'ABORTED');
  await page.waitForTimeout(300); // any late rejection would surface as a page error
});

test('costs per runtime path', () => {
  const brief = Object.fromEntries(Object.entries(costs).map(([k, v]) => [k, { requests: v.requests, round_trips: v.roundTrips, bytes: v.bytes }]));
  console.log(`open+snapshot cost by runtime: ${JSON.stringify(brief, null, 1)}`);
});
