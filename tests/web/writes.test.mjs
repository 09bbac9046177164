// Writes from the package as users install it (the `npm pack` tarball): in Node, in a Vite app
// in headless Chromium, and in workerd through the edge-ingest example worker
// (pkg-config/examples/edge-ingest), each committing to v9 Copy-On-Write and Merge-On-Read
// tables with a metadata table (files, column_stats, partition_stats, record_index) served by
// moto's S3 on loopback. After every write the package's read, PyPI `hudi` and the native CLI
// read the same rows, and those are the rows a model of the writes expects.
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { repo, startLatencyProxy, startMoto, startNginx, unzippedFixtures } from './lib/servers.mjs';
import { launchChromium } from './lib/browser.mjs';
import { WRITE_TABLES, assertReadersAgree, bin, dataOnly, hudiRsLines, installTarball, lines, loadTables, s3Options, txnRows } from './lib/writes.mjs';
import { startIngestWorker } from './ingest-worker.mjs';

let moto;
let project;
let pkg;

before(async () => {
  moto = await startMoto();
  for (const bucket of ['node-writes', 'web-writes', 'ingest-cow', 'ingest-mor']) loadTables(moto.url, bucket, Object.values(WRITE_TABLES));
  project = installTarball();
  pkg = await import(join(project, 'node_modules', 'hudi-edge', 'dist', 'node.js'));
});

after(async () => {
  await moto?.stop();
  if (project) rmSync(project, { recursive: true, force: true });
});

/** The rows a table holds after `writes` on top of `base` (data columns only, by txn_id; the
 *  MOR fixture holds one key twice, which the writes leave alone). */
function model(base, writes) {
  const m = new Map();
  for (const r of base) m.set(r.txn_id, [...(m.get(r.txn_id) ?? []), dataOnly(r)]);
  for (const [op, rows] of writes) for (const r of rows) op === 'delete' ? m.delete(r.txn_id) : m.set(r.txn_id, [dataOnly(r)]);
  return lines([...m.values()].flat());
}

/** Base rows whose key is there once, each changed with a later ordering value. */
const updatesOf = (base, n) =>
  base
    .filter((r) => base.filter((x) => x.txn_id === r.txn_id).length === 1)
    .slice(0, n)
    .map((r) => ({ ...dataOnly(r), merchant_name: `updated ${r.txn_id}`, txn_ts: r.txn_ts + 1 }));

const partitionOf = (kind, r) => (kind === 'cow' ? { region: r.region } : { ts_str: r.ts_str });

describe('Node: the tarball upserts, inserts and deletes', () => {
  for (const [kind, name] of Object.entries(WRITE_TABLES)) {
    test(`${kind}: ${name}`, async () => {
      const uri = `s3://node-writes/${name}`;
      const t = await pkg.HudiTable.open(uri, { s3: s3Options(moto.url) });
      const base = await t.rows();
      assertReadersAgree(moto.url, uri, base, 'before');
      const writes = [];
      const action = kind === 'cow' ? 'commit' : 'deltacommit';
      const check = async (r, op, rows, counts) => {
        writes.push([op, rows]);
        assert.equal(r.operation, op);
        assert.equal(r.action, action);
        assert.match(r.instant, /^\d{17}$/);
        assert.ok(r.completionTime > r.instant, `${r.completionTime} after ${r.instant}`);
        assert.deepEqual({ inserted: r.inserted, updated: r.updated, deleted: r.deleted }, counts, op);
        assert.ok(r.filesWritten.length > 0 && r.io.puts > 0, JSON.stringify(r.io));
        // Every write lists its files and keys; stats partitions get records when files got rows.
        const mdt = ['column_stats', 'files', 'partition_stats', 'record_index'];
        assert.ok(r.metadataPartitions.includes('files') && r.metadataPartitions.includes('record_index') && r.metadataPartitions.every((p) => mdt.includes(p)), r.metadataPartitions.join());
        const now = await t.rows();
        assert.deepEqual(lines(now.map(dataOnly)), model(base, writes), `${op}: the rows the writes make`);
        assertReadersAgree(moto.url, uri, now, op);
        // The write's instant; after it only the services it ran (clean, compaction, archival).
        const timeline = await t.timeline();
        const at = timeline.findIndex((i) => i.requestedTime === r.instant);
        assert.deepEqual([timeline[at].state, timeline[at].operation], ['completed', op.toUpperCase()]);
        const services = timeline.slice(at + 1).map((i) => i.operation ?? i.action);
        assert.ok(services.every((o) => ['COMPACT', 'clean'].includes(o)), services.join());
      };

      const updates = updatesOf(base, 3);
      const fresh = txnRows(kind, 50, { prefix: 'NODE' });
      await check(await t.upsert([...updates, ...fresh], {}), 'upsert', [...updates, ...fresh], { inserted: 50, updated: 3, deleted: 0 });
      const more = txnRows(kind, 20, { prefix: 'NODE', from: 50 });
      await check(await t.insert(more), 'insert', more, { inserted: 20, updated: 0, deleted: 0 });
      // Keys as key + partition fields, and one whole row as rows() gives it.
      const keys = [...fresh.slice(0, 4).map((r) => ({ txn_id: r.txn_id, ...partitionOf(kind, r) })), (await t.rows()).find((r) => r.txn_id === more[0].txn_id)];
      await check(await t.delete(keys), 'delete', keys, { inserted: 0, updated: 0, deleted: 5 });
      t.close();
    });
  }

  test('the .d.ts types the write API (tsc on a consumer of the tarball)', () => {
    writeFileSync(
      join(project, 'typed.ts'),
      `import { HudiTable, ConflictError, InvalidInputError, AbortedError, type CommitResult, type WriteProgress, type WriterState } from 'hudi-edge';
export async function ingest(t: HudiTable, rows: Record<string, unknown>[], signal: AbortSignal): Promise<CommitResult> {
  const seen: WriteProgress['phase'][] = [];
  try {
    const r: CommitResult = await t.upsert(rows, { signal, onProgress: (p) => seen.push(p.phase), commitRetries: 3, options: { 'hoodie.parquet.compression.codec': 'snappy' } });
    const n: number = r.inserted + r.updated + r.deleted;
    const files: string[] = r.filesWritten;
    void n, files;
    await t.insert(rows);
    await t.delete([{ txn_id: 'x', region: 'us' }]);
    const w: WriterState = await t.writers();
    void w.lock?.validUntil;
    return r;
  } catch (e) {
    if (e instanceof ConflictError) console.log(e.instant);
    if (e instanceof InvalidInputError) console.log(e.row, e.column);
    if (e instanceof AbortedError) console.log(e.rolledBack, e.pending);
    throw e;
  }
}
// @ts-expect-error: operation names are typed
export const bad: Parameters<HudiTable['write']>[1] = { operation: 'merge' };
`,
    );
    writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions: { strict: true, noEmit: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', lib: ['es2022', 'dom'], skipLibCheck: true }, files: ['typed.ts'] }));
    execFileSync(process.execPath, [join(repo, 'pkg-config', 'node_modules', 'typescript', 'bin', 'tsc'), '-p', project], { cwd: project, stdio: 'inherit' });
  });

  test('the README write example', () => {
    const text = readFileSync(join(repo, 'pkg-config', 'README.md'), 'utf8');
    const code = text.match(/<!-- tested: write -->\s*```js\n([\s\S]*?)```/)?.[1];
    assert.ok(code, 'pkg-config/README.md has a tested write example');
    loadTables(moto.url, 'readme', [WRITE_TABLES.cow]);
    const o = s3Options(moto.url);
    const runnable = code
      .replace('s3://bucket/tables/txns', `s3://readme/${WRITE_TABLES.cow}`)
      .replace("endpoint: 'https://s3.example.com'", `endpoint: '${o.endpoint}', forcePathStyle: true`)
      .replace("'KEY'", `'${o.accessKeyId}'`)
      .replace("'SECRET'", `'${o.secretAccessKey}'`);
    writeFileSync(join(project, 'readme-write.mjs'), runnable);
    const out = execFileSync(process.execPath, ['readme-write.mjs'], { cwd: project, encoding: 'utf8' });
    assert.match(out, /^\d{17} commit: 1 inserted, 0 updated\n\d{17}: 1 deleted\n$/);
  });

  test('the README create example', () => {
    const text = readFileSync(join(repo, 'pkg-config', 'README.md'), 'utf8');
    const code = text.match(/<!-- tested: create -->\s*```js\n([\s\S]*?)```/)?.[1];
    assert.ok(code, 'pkg-config/README.md has a tested create example');
    loadTables(moto.url, 'readme-create', []);
    const o = s3Options(moto.url);
    const runnable = code
      .replace('s3://bucket/tables/orders', 's3://readme-create/tables/orders')
      .replace("endpoint: 'https://s3.example.com'", `endpoint: '${o.endpoint}', forcePathStyle: true`)
      .replace("'KEY'", `'${o.accessKeyId}'`)
      .replace("'SECRET'", `'${o.secretAccessKey}'`);
    writeFileSync(join(project, 'readme-create.mjs'), runnable);
    const out = execFileSync(process.execPath, ['readme-create.mjs'], { cwd: project, encoding: 'utf8' });
    assert.match(out, /^\d{17} deltacommit: 1 inserted\n$/);
    assert.deepEqual(hudiRsLines(moto.url, 's3://readme-create/tables/orders').map((l) => JSON.parse(l).order_id), ['O-1'], 'PyPI hudi reads the new table');
  });

  test('errors arrive with their codes', async () => {
    const root = unzippedFixtures();
    const nginx = await startNginx({ mounts: { '/tables/': join(root, 'tables') } });
    try {
      const http = await pkg.HudiTable.open(`${nginx.url}/tables/${WRITE_TABLES.cow}`);
      await assert.rejects(http.upsert(txnRows('cow', 1)), (e) => e instanceof pkg.ReadOnlyError && e.code === 'READ_ONLY' && e instanceof pkg.HudiError);
      assert.equal(http.io().puts, 0);
    } finally {
      await nginx.stop();
    }
    const t = await pkg.HudiTable.open(`s3://node-writes/${WRITE_TABLES.cow}`, { s3: s3Options(moto.url) });
    const before = await t.rows();
    const rows = txnRows('cow', 3, { prefix: 'BAD' });
    rows[2].amount = 'twelve';
    await assert.rejects(t.upsert(rows), (e) => e.code === 'INVALID_INPUT' && e.row === 2 && e.column === 'amount');
    await assert.rejects(t.upsert([{ ...rows[0], no_such_column: 1 }]), (e) => e.code === 'INVALID_INPUT' && e.row === 0 && e.column === 'no_such_column');
    const noKey = txnRows('cow', 2, { prefix: 'BAD' });
    delete noKey[1].txn_id;
    await assert.rejects(t.insert(noKey), (e) => e.code === 'INVALID_INPUT' && e.column === 'txn_id', 'a missing key field');
    const aborted = new AbortController();
    aborted.abort();
    await assert.rejects(t.upsert(txnRows('cow', 1), { signal: aborted.signal }), (e) => e instanceof pkg.AbortedError && e.code === 'ABORTED');
    assert.deepEqual(lines(await t.rows()), lines(before), 'nothing was written');
    // A metadata table with secondary indexes: they are kept in step with the write.
    loadTables(moto.url, 'node-writes', ['sample_table/cow/v9_txns_simple_meta']);
    const secondary = await pkg.HudiTable.open('s3://node-writes/sample_table/cow/v9_txns_simple_meta', { s3: s3Options(moto.url) });
    const kept = await secondary.upsert(txnRows('cow', 1, { prefix: 'SECONDARY' }));
    assert.ok(kept.metadataPartitions.some((p) => p.startsWith('secondary_index_')), JSON.stringify(kept.metadataPartitions));
  });
});

describe('Chromium: a Vite app with the tarball upserts', () => {
  test('into the COW and MOR tables, readers agree after each commit', async () => {
    const app = join(project, 'app');
    mkdirSync(app, { recursive: true });
    writeFileSync(join(app, 'index.html'), '<!doctype html><meta charset="utf-8"><title>writer</title><pre id="out">loading</pre><script type="module" src="./main.js"></script>\n');
    writeFileSync(join(app, 'main.js'), "import * as hudi from 'hudi-edge';\nwindow.hudi = hudi;\ndocument.querySelector('#out').dataset.ready = 'yes';\n");
    writeFileSync(join(app, 'vite.config.js'), "export default { base: './', logLevel: 'warn', build: { outDir: 'dist', emptyOutDir: true } };\n");
    execFileSync(bin('vite'), ['build'], { cwd: app, stdio: 'inherit' });
    // The page and moto on one origin (moto answers no CORS preflight for signed PUTs).
    const origin = await startLatencyProxy(moto.url, 0, { serve: { prefix: '/app/', dir: join(app, 'dist') } });
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      await page.goto(`${origin.url}/app/`);
      await page.waitForSelector('#out[data-ready]');
      for (const [kind, name] of Object.entries(WRITE_TABLES)) {
        const uri = `s3://web-writes/${name}`;
        const rows = txnRows(kind, 40, { prefix: 'WEB' });
        // Values cross from the page as JSON (int64 as numbers: these fit).
        const base = await page.evaluate(
          async ({ uri, s3 }) => {
            window.plain = (v) => JSON.parse(JSON.stringify(v, (_, x) => (typeof x === 'bigint' ? Number(x) : x)));
            window.table = await window.hudi.HudiTable.open(uri, { s3 });
            return window.plain(await window.table.rows());
          },
          { uri, s3: s3Options(origin.url) },
        );
        // One handle in the page, two upserts; after each the readers agree.
        const changed = rows.slice(0, 5).map((x) => ({ ...x, merchant_name: 'again', txn_ts: x.txn_ts + 1 }));
        const writes = [];
        for (const [batch, counts] of [[rows, [40, 0]], [changed, [0, 5]]]) {
          const got = await page.evaluate(async (batch) => {
            const phases = [];
            const r = await window.table.upsert(batch, { onProgress: (p) => phases.push(p.phase) });
            return window.plain({ r, phases, rows: await window.table.rows() });
          }, batch);
          writes.push(['upsert', batch]);
          assert.deepEqual([got.r.inserted, got.r.updated], counts, `${kind}, upsert ${writes.length}`);
          assert.equal(got.phases.at(-1), 'committed');
          assert.deepEqual(lines(got.rows.map(dataOnly)), model(base, writes), `${kind}, upsert ${writes.length}`);
          assertReadersAgree(moto.url, uri, got.rows, `Chromium ${kind}, upsert ${writes.length}`);
        }
        await page.evaluate(() => window.table.close());
      }
      await page.close();
    } finally {
      await browser.close();
      await origin.stop();
    }
  });
});

describe('workerd: the edge-ingest example', () => {
  test('TABLE_SPEC: a GET of a missing table is a 404, the first POSTs create it', async () => {
    const bucket = 'ingest-create';
    const uri = `s3://${bucket}/tables/orders`;
    loadTables(moto.url, bucket, []);
    const spec = { columns: 'order_id STRING NOT NULL, ts BIGINT, region STRING, amount DECIMAL(12,2), note STRING', recordKey: 'order_id', partitionBy: 'region', orderingFields: 'ts', type: 'mor' };
    const worker = await startIngestWorker(project, bucket, uri, moto.url, { TABLE_SPEC: JSON.stringify(spec) });
    try {
      const missing = await fetch(worker.url);
      assert.deepEqual([missing.status, (await missing.json()).code], [404, 'NOT_FOUND'], 'a GET does not create');
      const rows = (from) => Array.from({ length: 50 }, (_, i) => ({ order_id: `O-${from + i}`, ts: 1, region: i % 2 ? 'eu' : 'us', amount: `${i}.25`, note: `n${from + i}` }));
      const post = (body) => fetch(worker.url, { method: 'POST', body: JSON.stringify(body) }).then(async (r) => ({ status: r.status, body: await r.json(), rows: body }));
      // Two first POSTs at once: one creates the table, the other opens it, and both commit
      // (the worker's default coordinates several writers; as single writers one would roll
      // back the other's write in progress, and that table lost a committed file).
      const first = await Promise.all([post(rows(0)), post(rows(100))]);
      for (const r of first) assert.equal(r.status, 200, JSON.stringify(r.body));
      const third = await post(rows(200));
      assert.equal(third.status, 200, JSON.stringify(third.body));
      const committed = [...first, third];
      await worker.settled();
      const t = await pkg.HudiTable.open(uri, { s3: s3Options(moto.url) });
      assert.equal((await t.info()).name, 'orders');
      const now = await t.rows();
      assert.deepEqual(now.map((r) => r.order_id).sort(), committed.flatMap((r) => r.rows.map((x) => x.order_id)).sort());
      assertReadersAgree(moto.url, uri, now, 'a table the worker created');
      t.close();
    } finally {
      await worker.stop();
    }
  });

  test('the handle kept between POSTs: the next POST opens nothing, and a commit by another writer meanwhile is seen', async () => {
    const kind = 'mor';
    const bucket = 'ingest-warm';
    const uri = `s3://${bucket}/${WRITE_TABLES[kind]}`;
    loadTables(moto.url, bucket, [WRITE_TABLES[kind]]);
    const proxy = await startLatencyProxy(moto.url, 0, { trace: true });
    const worker = await startIngestWorker(project, bucket, uri, proxy.url, { SINGLE_WRITER: 'true' });
    const direct = await pkg.HudiTable.open(uri, { s3: s3Options(moto.url) });
    try {
      const base = await direct.rows();
      const writes = [];
      // The storage requests a POST made, by path (its answer comes once they are done); the
      // services and refresh after it are waited out before the next.
      const post = async (rows, { settle = true } = {}) => {
        const from = proxy.stats.trace.length;
        const res = await fetch(worker.url, { method: 'POST', body: JSON.stringify(rows) });
        const body = await res.json();
        assert.equal(res.status, 200, JSON.stringify(body));
        writes.push(['upsert', rows]);
        const paths = proxy.stats.trace.slice(from).map((r) => decodeURIComponent(new URL(r.url, 'http://x').pathname));
        if (settle) await worker.settled();
        // The table's own properties (a metadata-table compaction reopens the metadata table's).
        return { body, properties: paths.filter((p) => p === `/${bucket}/${WRITE_TABLES[kind]}/.hoodie/hoodie.properties`).length };
      };
      const first = await post(txnRows(kind, 30, { prefix: 'WARM' }));
      assert.ok(first.properties >= 1, 'the first POST opens the table');
      const second = await post([...txnRows(kind, 30, { prefix: 'WARM', from: 30 }), ...txnRows(kind, 5, { prefix: 'WARM', version: 1 })]);
      assert.deepEqual([second.properties, second.body.inserted, second.body.updated], [0, 30, 5], 'the kept handle writes without opening');
      // Another writer commits between two POSTs: the kept handle is behind, and the write sees it.
      const other = txnRows(kind, 10, { prefix: 'WARM', from: 60, version: 2 });
      await direct.upsert(other);
      writes.push(['upsert', other]);
      const third = await post([...txnRows(kind, 10, { prefix: 'WARM', from: 60, version: 3 }), ...txnRows(kind, 5, { prefix: 'WARM', from: 70 })], { settle: false });
      assert.deepEqual([third.body.inserted, third.body.updated], [5, 10], 'the other writer\'s keys are updates');
      // The next POST comes while the work after that answer still runs: as one writer it
      // waits for that work, then writes on the handle it kept.
      const fourth = await post(txnRows(kind, 5, { prefix: 'WARM', from: 75 }));
      assert.deepEqual([fourth.body.inserted, fourth.body.updated], [5, 0]);
      await direct.refresh();
      const now = await direct.rows();
      assert.deepEqual(lines(now.map(dataOnly)), model(base, writes));
      assertReadersAgree(moto.url, uri, now, 'after POSTs on a kept handle');
    } finally {
      direct.close();
      await worker.stop();
      await proxy.stop();
    }
  });

  for (const [kind, posts] of [['mor', 20], ['cow', 5]]) {
    test(`${posts} POSTs of 100 rows into the ${kind.toUpperCase()} table; the table holds exactly those rows`, async () => {
      const name = WRITE_TABLES[kind];
      const bucket = `ingest-${kind}`;
      const uri = `s3://${bucket}/${name}`;
      const worker = await startIngestWorker(project, `ingest-${kind}`, uri, moto.url);
      try {
        const t0 = await pkg.HudiTable.open(uri, { s3: s3Options(moto.url) });
        const base = await t0.rows();
        t0.close();
        const writes = [];
        const instants = [];
        for (let k = 0; k < posts; k++) {
          // 80 new keys and 20 keys of the POST before, updated.
          const rows = [...txnRows(kind, 80, { prefix: 'INGEST', from: k * 80, version: k }), ...(k > 0 ? txnRows(kind, 20, { prefix: 'INGEST', from: (k - 1) * 80, version: k }) : txnRows(kind, 20, { prefix: 'INGEST0', version: k }))];
          const res = await fetch(worker.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(rows) });
          const body = await res.json();
          assert.equal(res.status, 200, JSON.stringify(body));
          assert.deepEqual([body.operation, body.inserted, body.updated, body.deleted], ['upsert', k > 0 ? 80 : 100, k > 0 ? 20 : 0, 0], `POST ${k}`);
          writes.push(['upsert', rows]);
          instants.push(body.instant);
        }
        const res = await fetch(`${worker.url}/?limit=3`);
        const latest = await res.json();
        assert.deepEqual(latest.map((c) => c.instant), instants.slice(-3).reverse());
        assert.deepEqual([latest[0].operation, latest[0].inserted, latest[0].updated], ['upsert', 80, 20]);
        const bad = await fetch(worker.url, { method: 'POST', body: JSON.stringify([{ ...txnRows(kind, 1)[0], amount: 'lots' }]) });
        assert.deepEqual([bad.status, (await bad.json()).code], [400, 'INVALID_INPUT']);
        const notJson = await fetch(worker.url, { method: 'POST', body: '{oops' });
        assert.equal(notJson.status, 400);
        // Hostile bodies: refused before any write, with the engine's code.
        if (kind === 'cow') {
          const outside = await fetch(worker.url, { method: 'POST', body: JSON.stringify([{ ...txnRows(kind, 1)[0], region: '../../x' }]) });
          const outsideBody = await outside.json();
          assert.deepEqual([outside.status, outsideBody.code, /partition path/.test(outsideBody.message)], [400, 'INVALID_INPUT', true], JSON.stringify(outsideBody));
        }
        const deep = await fetch(worker.url, { method: 'POST', body: `[{"txn_id":"D","merchant_name":${'['.repeat(200000)}${']'.repeat(200000)}}]` });
        assert.equal(deep.status, 400, 'nesting beyond JSON.parse or the schema: refused, the isolate lives');
        // The worker answers before reading such a body: the client sends until the answer comes.
        const limit = 4 * 1024 * 1024;
        const declared = await answeredEarly(worker.url, limit, limit + 1);
        assert.deepEqual([declared.status, declared.body.code], [413, 'INVALID_INPUT'], 'a declared length over the limit');
        const streamed = await answeredEarly(worker.url, limit);
        assert.deepEqual([streamed.status, streamed.body.code], [413, 'INVALID_INPUT'], 'a streamed body is cut at the limit');
        assert.equal((await fetch(`${worker.url}/?limit=1`)).status, 200, 'the isolate still serves');
        // The services the last POSTs deferred run after their answers: read once they are done.
        await worker.settled();

        const t = await pkg.HudiTable.open(uri, { s3: s3Options(moto.url) });
        const now = await t.rows();
        assert.equal(now.length, base.length + posts * 80 + 20);
        assert.deepEqual(lines(now.map(dataOnly)), model(base, writes), 'exactly the rows POSTed (the last version of each key) beside the table\'s own');
        assertReadersAgree(moto.url, uri, now, `after ${posts} POSTs`);
        if (kind === 'mor') {
          // Inline compaction (every 5 delta commits) ran after the answers, on the kept handle.
          const compactions = (await t.timeline()).filter((i) => i.operation === 'COMPACT' && i.state === 'completed' && i.requestedTime > instants[0]);
          assert.ok(compactions.length >= 1, 'the services deferred past the answers ran');
        }
        t.close();
      } finally {
        await worker.stop();
      }
    });
  }
});

/** POSTs to a worker whose body limit is `limit` bytes: with a declared Content-Length of
 *  `declared` bytes (headers only: the worker must answer on the header), or a chunked body
 *  sent a little past the limit and left open (the worker must answer once it passes it).
 *  Nothing is written after that, so the early answer is read rather than lost to a reset. */
function answeredEarly(url, limit, declared) {
  return new Promise((resolve, reject) => {
    const headers = declared ? { 'content-length': String(declared) } : { 'transfer-encoding': 'chunked' };
    const req = http.request(url, { method: 'POST', headers });
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => {
        req.destroy();
        try {
          resolve({ status: res.statusCode, body: JSON.parse(text) });
        } catch (e) {
          reject(e);
        }
      });
    });
    req.on('error', reject);
    if (declared) {
      req.flushHeaders();
      return;
    }
    const chunk = Buffer.alloc(64 * 1024, 32);
    let sent = 0;
    const pump = () => {
      if (sent > limit + 2 * chunk.length) return;
      sent += chunk.length;
      if (req.write(chunk)) setImmediate(pump);
      else req.once('drain', pump);
    };
    pump();
  });
}
