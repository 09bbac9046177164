// The wasm build in Node over real servers on loopback: nginx (Range + JSON autoindex, and
// the manifest written by `hudi-edge manifest`), moto's S3 (SigV4, ListObjectsV2,
// presigned URLs), the native CLI against both, a request log, and a fault-injecting server.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { crc32, deflateRawSync } from 'node:zlib';

import { check, checkSnapshot, sameRows } from '../js/fixture_checks.mjs';
import { allowances } from '../js/expected.mjs';
import { fixtures, fixtureNames, tablesDir, startNginx, startMoto, S3_CREDS, BUCKET, wasmNode, cliBin } from './servers.mjs';
import { startFaultServer } from './fault_server.mjs';
import { startCountingProxy } from './counting_proxy.mjs';
import { presigner } from './sigv4.mjs';

const require = createRequire(import.meta.url);
const { WasmTable } = require(join(wasmNode, 'hudi_edge.js'));
const run = promisify(execFile);

const unhandled = [];
process.on('unhandledRejection', (e) => unhandled.push(e));

const exp = (name) => JSON.parse(readFileSync(join(fixtures, 'expected', `${name}.json`), 'utf8'));
const isMor = (name) => exp(name).table.table_type === 'MERGE_ON_READ';
// COW and MOR snapshots of v6 and v9 tables: what every runtime path checks at least.
export const CORE = [
  'sample_table/cow/v6_complexkeygen_hivestyle',
  'sample_table/cow/v9_txns_simple_meta',
  'sample_table/mor/parquet/v6_simplekeygen_nonhivestyle',
  'sample_table/mor/avro/v9_txns_simple_meta',
];

let tables, nginx, moto, faults;
const s3Options = () => ({ s3: { region: S3_CREDS.region, endpoint: moto.url, accessKeyId: S3_CREDS.accessKeyId, secretAccessKey: S3_CREDS.secretAccessKey, forcePathStyle: true } });

before(async () => {
  tables = tablesDir();
  [nginx, moto, faults] = await Promise.all([startNginx(tables), startMoto(tables), startFaultServer(tables)]);
});

after(async () => {
  await Promise.all([nginx?.stop(), moto?.stop(), faults?.stop()]);
  assert.deepEqual(unhandled.map(String), [], 'no unhandled promise rejections');
});

// ---- every fixture, every expectation, over nginx (manifest listing) and S3 (SigV4)

for (const name of fixtureNames()) {
  test(`nginx→node (manifest): ${name}`, async () => {
    const table = await WasmTable.openUrl(`${nginx.url}/${name}`, {});
    await check(name, table, exp(name), allowances);
  });
}

for (const name of fixtureNames()) {
  test(`s3→node (SigV4): ${name}`, async () => {
    const table = await WasmTable.openUrl(`s3://${BUCKET}/${name}`, s3Options());
    await check(name, table, exp(name), allowances);
  });
}

// ---- JSON autoindex: fine for Copy-On-Write, refused for Merge-On-Read partitions

for (const name of CORE) {
  test(`nginx→node (autoindex): ${name}`, async () => {
    const table = await WasmTable.openUrl(`${nginx.url}/${name}`, { listing: 'autoindex' });
    if (isMor(name)) {
      await assert.rejects(table.readJson({}, true), (e) => e.code === 'UNSUPPORTED' && /hides dot-files/.test(e.message));
    } else {
      await checkSnapshot(name, table, exp(name));
    }
  });
}

// ---- presigned URLs (the callback holds the secrets), S3-style listing through them

for (const name of CORE) {
  test(`presigned→node: ${name}`, async () => {
    const sign = presigner({ endpoint: moto.url, bucket: BUCKET, creds: S3_CREDS });
    const asked = [];
    const presign = async (method, key, page) => {
      asked.push(method);
      return sign(method, key, page);
    };
    const table = await WasmTable.openUrl(`s3://${BUCKET}/${name}`, {}, undefined, presign);
    await checkSnapshot(name, table, exp(name));
    assert.ok(asked.includes('LIST') && asked.includes('GET'), `presign asked for ${[...new Set(asked)]}`);
  });
}

// ---- the native CLI against nginx and S3

const cliRows = async (url, extra = [], env = {}) => {
  const { stdout } = await run(cliBin, ['read', url, '--format', 'oracle-jsonl', ...extra], { env: { ...process.env, ...env }, maxBuffer: 64 << 20 });
  return stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l));
};
for (const name of CORE) {
  test(`native CLI ← nginx (manifest): ${name}`, async () => {
    sameRows(name, exp(name), await cliRows(`${nginx.url}/${name}`), exp(name).snapshot.rows, 'snapshot');
  });
  test(`native CLI ← s3: ${name}`, async () => {
    const env = { AWS_ACCESS_KEY_ID: S3_CREDS.accessKeyId, AWS_SECRET_ACCESS_KEY: S3_CREDS.secretAccessKey, AWS_REGION: S3_CREDS.region };
    const rows = await cliRows(`s3://${BUCKET}/${name}`, ['--endpoint', moto.url, '--path-style'], env);
    sameRows(name, exp(name), rows, exp(name).snapshot.rows, 'snapshot');
  });
}
// The http flags, each against a server that shows its effect (counted by the server side).
test('native CLI http flags: --header, --concurrency, --retries, --listing', async (t) => {
  const name = CORE[1]; // a COW table: the autoindex can list it
  const proxy = await startCountingProxy(nginx.url);
  t.after(() => proxy.stop());
  const want = exp(name).snapshot.rows;
  const cli = (args) => run(cliBin, ['read', ...args, '--format', 'oracle-jsonl'], { maxBuffer: 64 << 20 }).then(
    ({ stdout }) => ({ code: 0, rows: stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l)) }),
    (e) => ({ code: e.code, stderr: e.stderr }),
  );
  const cases = [
    { what: '--header on every request', args: [`${proxy.url}/${name}`, '--header', 'X-Test: hudi-edge-cli'], check: (log) => log.every((e) => e.headers['x-test'] === 'hudi-edge-cli') },
    { what: '--concurrency 1: one request in flight at a time', args: [`${proxy.url}/${name}`, '--concurrency', '1'], check: () => proxy.maxInFlight === 1 },
    { what: '--concurrency 3: never more than 3 in flight', args: [`${proxy.url}/${name}`, '--concurrency', '3'], check: () => proxy.maxInFlight <= 3 },
    { what: '--listing autoindex: the JSON index, no manifest asked', args: [`${proxy.url}/${name}`, '--listing', 'autoindex'], check: (log) => !log.some((e) => e.path.endsWith('hudi-edge-manifest.json')) && log.some((e) => e.path.endsWith('/')) },
    { what: '--listing manifest: the manifest, no index asked', args: [`${proxy.url}/${name}`, '--listing', 'manifest'], check: (log) => log.some((e) => e.path.endsWith('hudi-edge-manifest.json')) && !log.some((e) => e.path.endsWith('/')) },
  ];
  for (const c of cases) {
    proxy.reset();
    const r = await cli(c.args);
    assert.equal(r.code, 0, `${c.what}: ${r.stderr}`);
    sameRows(name, exp(name), r.rows, want, c.what);
    assert.ok(c.check(proxy.log), `${c.what}: ${JSON.stringify(proxy.log.map((e) => [e.method, e.path, e.status]).slice(0, 20))} (max in flight ${proxy.maxInFlight})`);
  }
  // Retries: the flaky area answers 503 twice per request; 3 retries (the default) get
  // through, none fails with the status named.
  faults.reset();
  const flaky = `${faults.url}/flaky/${name}`;
  const retried = await cli([flaky, '--listing', 'autoindex']);
  assert.equal(retried.code, 0, retried.stderr);
  sameRows(name, exp(name), retried.rows, want, '--retries (default 3) through 503s');
  faults.reset();
  const none = await cli([flaky, '--listing', 'autoindex', '--retries', '0']);
  assert.equal(none.code, 1, 'no retries: the first 503 fails the read');
  assert.match(none.stderr, /^error\[IO\].*503/s);
  const asked = faults.log.map((e) => `${e.method} ${e.path} ${e.range}`);
  assert.ok(asked.length > 0 && faults.log.every((e) => e.status === 503), JSON.stringify(faults.log));
  assert.equal(new Set(asked).size, asked.length, `no request asked twice: ${asked.join(', ')}`);
});
test('native CLI ← nginx (autoindex) refuses a MOR table with a clear error', async () => {
  const name = 'sample_table/mor/avro/v9_txns_simple_meta';
  await assert.rejects(run(cliBin, ['read', `${nginx.url}/${name}`, '--listing', 'autoindex']), (e) => /UNSUPPORTED/.test(e.stderr) && /hides dot-files/.test(e.stderr));
});
test('native CLI: unsigned requests to a private bucket are ACCESS_DENIED naming the object', async () => {
  const name = CORE[0];
  const env = { AWS_ACCESS_KEY_ID: S3_CREDS.accessKeyId, AWS_SECRET_ACCESS_KEY: S3_CREDS.secretAccessKey };
  await assert.rejects(run(cliBin, ['info', `s3://${BUCKET}/${name}`, '--endpoint', moto.url, '--path-style', '--anonymous'], { env: { ...process.env, ...env } }), (e) => {
    assert.match(e.stderr, /error\[ACCESS_DENIED\]/);
    assert.match(e.stderr, /hoodie\.properties/);
    assert.doesNotMatch(e.stderr, new RegExp(S3_CREDS.secretAccessKey));
    return true;
  });
});

// ---- what open + snapshot cost

const V9 = 'sample_table/mor/avro/v9_txns_simple_meta';
// Dependent round trips of open + snapshot, at most:
//   1  hoodie.properties, and the timeline listing (the manifest or S3 listing), together;
//   +1 when the listing needs a second step (no manifest: probe, then the JSON index);
//   1  commit metadata of the instants the file view needs (replace commits ...), together;
//   +1 partition listing when there is no manifest (S3 / autoindex: root, then partitions);
//   1  Parquet footers: one speculative 64 KiB tail read per file, all files together;
//   1  column chunks outside the tails (and log files), all files together.
// = 4 with a manifest, 6 for S3 or an autoindex. The concurrency limit (8 in flight) can
// split a phase of more than 8 requests; the 5-file tables here stay within it.
// Planned from the metadata table instead of listings, the partition listing is replaced by
// the metadata table's own open (properties + timeline, 1 round trip, overlapping the data
// table's commit metadata) and its `files` partition (listing + HFile tail, then the data
// block and the partition's log files: 2 round trips), so the same 6 round trips at most.
const ROUND_TRIPS_MAX = 6;
// By listing: 1 + listing + 3 instants + 5 files × (tail + ≤ 3 chunk ranges) = 30.
const REQUESTS_MAX_LISTING = 30;
// By the metadata table: its properties, timeline listing and the commit of its latest
// instant (3), the `files` partition listing (1), base HFile tail and block (2) and its log
// files (this table: 2), less the data table's partition listings it saves (2 on S3).
const REQUESTS_MAX_METADATA = REQUESTS_MAX_LISTING + 6;
test(`request log: open + snapshot of ${V9}`, async (t) => {
  const report = {};
  // Every request is counted by the server side: counting proxies in front of nginx and moto,
  // the fault server's own log.
  const [nginxSeen, motoSeen] = await Promise.all([startCountingProxy(nginx.url), startCountingProxy(moto.url)]);
  t.after(() => Promise.all([nginxSeen.stop(), motoSeen.stop()]));
  const faultsSeen = { reset: () => faults.reset(), log: faults.log };
  // The server's requests split into listings (S3 ListObjectsV2, a JSON index, the manifest)
  // and object reads.
  const isListing = (e) => e.path.endsWith('/') || e.path.endsWith('hudi-edge-manifest.json') || /list-type=2/.test(e.query ?? '');
  const served = (seen) => ({ listings: seen.log.filter(isListing).length, objects: seen.log.filter((e) => !isListing(e)).length });
  for (const [via, url, opts, seen] of [
    ['nginx+manifest', `${nginxSeen.url}/${V9}`, {}, nginxSeen],
    ['s3', `s3://${BUCKET}/${V9}`, { s3: { ...s3Options().s3, endpoint: motoSeen.url } }, motoSeen],
    ['fault-server (autoindex, COW)', `${faults.url}/ok/sample_table/cow/v9_txns_simple_meta`, { listing: 'autoindex' }, faultsSeen],
  ]) {
    for (const planner of ['metadata_table', 'listing']) {
      const read = { useMetadataTable: planner === 'metadata_table' };
      seen.reset();
      const table = await WasmTable.openUrl(url, opts);
      const opened = table.io();
      await table.readArrow(read);
      const total = table.io();
      const totalSeen = served(seen);
      await table.readArrow(read);
      const again = table.io();
      const againSeen = served(seen);
      table.free();
      // Object reads: io() and the server agree request for request. Listings: the server saw
      // no more than io() says (io() counts a listing that waited for the manifest another
      // one was already fetching as a request of its own).
      for (const [io, server, when] of [[total, totalSeen, 'open+snapshot'], [again, againSeen, 'and again']]) {
        assert.equal(server.objects, io.gets + io.heads, `${via}, ${planner}, ${when}: object requests the server saw vs io()`);
        assert.ok(server.listings <= io.lists, `${via}, ${planner}, ${when}: the server saw ${server.listings} listings, io() ${io.lists}`);
      }
      const httpRequests = totalSeen.objects + totalSeen.listings;
      // Round trips are phases with a request in flight: two independent chains that happen
      // not to overlap add one. A structural extra phase shows in every run, so the fewer of
      // two cold runs is what is bounded.
      const second = await WasmTable.openUrl(url, opts);
      await second.readArrow(read);
      const roundTrips = Math.min(total.roundTrips, second.io().roundTrips);
      second.free();
      report[`${via}, planned by ${planner}`] = {
        planner,
        open: { requests: opened.requests, round_trips: opened.roundTrips, bytes: opened.bytes },
        open_and_snapshot: { requests: total.requests, round_trips: roundTrips, bytes: total.bytes, http_requests_seen_by_server: httpRequests },
        repeat: { requests: again.requests - total.requests, gets: again.gets - total.gets },
      };
    }
  }
  console.log(`open+snapshot cost: ${JSON.stringify(report, null, 1)}`);
  for (const [via, r] of Object.entries(report)) {
    const total = r.open_and_snapshot;
    const max = r.planner === 'listing' ? REQUESTS_MAX_LISTING : REQUESTS_MAX_METADATA;
    assert.ok(total.round_trips <= ROUND_TRIPS_MAX, `${via}: ${total.round_trips} round trips`);
    assert.ok(total.http_requests_seen_by_server <= max, `${via}: the server saw ${total.http_requests_seen_by_server} requests (at most ${max})`);
    // Objects come from the session cache; only listings (which can change) are asked again.
    assert.equal(r.repeat.gets, 0, `${via}: a repeated read fetches no object`);
  }
});

// ---- faults

const COW9 = 'sample_table/cow/v9_txns_simple_meta';
test('faults: 503 twice then 200 is retried', async () => {
  faults.reset();
  const table = await WasmTable.openUrl(`${faults.url}/flaky/${COW9}`, { listing: 'autoindex' });
  await checkSnapshot(COW9, table, exp(COW9));
  assert.ok(faults.log.filter((e) => e.status === 503).length >= 2);
});

test('faults: a server that ignores Range (sliced locally, with a warning)', async () => {
  faults.reset();
  const table = await WasmTable.openUrl(`${faults.url}/norange/${COW9}`, { listing: 'autoindex' });
  await checkSnapshot(COW9, table, exp(COW9));
  const warnings = table.warnings();
  assert.ok(warnings.some((w) => /ignored Range/.test(w)), JSON.stringify(warnings));
});

test('faults: a body cut short is retried', async () => {
  faults.reset();
  const table = await WasmTable.openUrl(`${faults.url}/cut/${COW9}`, { listing: 'autoindex' });
  await checkSnapshot(COW9, table, exp(COW9));
  assert.ok(faults.log.some((e) => e.status < 0), 'some answers were cut');
});

test('faults: 403 names the object, never the token', async () => {
  const table = await WasmTable.openUrl(`${faults.url}/forbidden/${COW9}?sig=s3cr3t-token`, { listing: 'autoindex', headers: { authorization: 'Bearer s3cr3t-token' } });
  await assert.rejects(table.readJson({}, true), (e) => {
    assert.equal(e.code, 'ACCESS_DENIED');
    assert.match(e.message, /\.parquet/);
    assert.match(e.object, /^http:\/\/127\.0\.0\.1:\d+\/forbidden\/.*\.parquet$/);
    assert.doesNotMatch(e.message, /s3cr3t/);
    return true;
  });
});

test('faults: an abort drops the requests in flight', async () => {
  faults.reset();
  const table = await WasmTable.openUrl(`${faults.url}/slow/${COW9}`, { listing: 'autoindex' });
  const controller = new AbortController();
  const progress = [];
  // This read's data requests only: a late request of an earlier test (another mode) must not
  // count as this read having reached its data.
  const isData = (e) => e.mode === 'slow' && /\.parquet$/.test(e.path);
  // The server holds every data file until the test releases it (never, here): the read can
  // only end by the abort, which comes once the server has a data request.
  const reading = table.readArrow({}, controller.signal, (p) => progress.push(p));
  await faults.until((log) => log.some(isData));
  controller.abort();
  await assert.rejects(reading, (e) => e.code === 'ABORTED');
  assert.ok(progress.length >= 1 && progress[0].filesTotal > 0, JSON.stringify(progress));
  // The server sees every held data request hung up by the client.
  await faults.until((log) => log.filter(isData).every((e) => e.aborted));
  assert.ok(faults.log.filter(isData).every((e) => e.aborted && e.status === 0), 'data requests were aborted, none answered');
  faults.releaseSlow();
  // An already-aborted signal rejects at once.
  await assert.rejects(table.plan({}, AbortSignal.abort()), (e) => e.code === 'ABORTED');
});

// ---- listing modes and the client's paths the fixtures never reach, each shown by the
// server's own log

const isManifest = (e) => e.path.endsWith('.hoodie/hudi-edge-manifest.json');
const isIndex = (e) => e.path.endsWith('/') && !e.query.includes('list-type=2');
const isDataFile = (e) => /\.parquet$|\.log\.\d+_/.test(e.path);

test("listing 'auto': the manifest when there is one, else the JSON index", async () => {
  faults.reset();
  const withManifest = await WasmTable.openUrl(`${faults.url}/ok/${COW9}`, {});
  await checkSnapshot(COW9, withManifest, exp(COW9));
  assert.ok(faults.log.some((e) => isManifest(e) && e.status === 200), 'the manifest was read');
  assert.deepEqual(faults.log.filter(isIndex), [], 'no index asked when the manifest is there');
  faults.reset();
  const without = await WasmTable.openUrl(`${faults.url}/nomanifest/${COW9}`, {});
  await checkSnapshot(COW9, without, exp(COW9));
  const asked = faults.log.filter(isManifest);
  assert.ok(asked.length > 0 && asked.every((e) => e.status === 404), JSON.stringify(asked));
  assert.ok(faults.log.some((e) => isIndex(e) && e.status === 200), 'the JSON index was read');
});

test("listing 'manifest': only the manifest, and a clear error when it is missing", async () => {
  faults.reset();
  const table = await WasmTable.openUrl(`${faults.url}/ok/${V9}`, { listing: 'manifest' });
  await checkSnapshot(V9, table, exp(V9));
  assert.deepEqual(faults.log.filter(isIndex), [], 'no index asked');
  faults.reset();
  await assert.rejects(
    (async () => (await WasmTable.openUrl(`${faults.url}/nomanifest/${V9}`, { listing: 'manifest' })).readJson({}, true))(),
    (e) => {
      assert.equal(e.code, 'NOT_FOUND', e.message);
      assert.match(e.message, /hudi-edge-manifest\.json/);
      return true;
    },
  );
  assert.deepEqual(faults.log.filter(isIndex), [], 'no fallback to the index');
});

test("listing 's3' over plain HTTP: ListObjectsV2 answered in pages of 3, every page read", async () => {
  faults.reset();
  const table = await WasmTable.openUrl(`${faults.url}/s3/${V9}`, { listing: 's3' });
  await check(V9, table, exp(V9), allowances);
  const lists = faults.log.filter((e) => e.query.includes('list-type=2'));
  assert.ok(lists.length > 0 && lists.every((e) => e.status === 200), JSON.stringify(lists));
  assert.ok(lists.some((e) => e.query.includes('continuation-token=')), 'some listing went past its first page');
  assert.deepEqual(faults.log.filter(isIndex), [], 'no JSON index asked');
});

test("listing 's3': the partitions in one listing that starts past .hoodie/ (start-after), directories after a partial page", async () => {
  const byManifest = await (await WasmTable.openUrl(`${nginx.url}/${V9}`, {})).fileGroups();
  // S3 (moto) pages hold 1,000 keys: the timeline's listing and the one past `.hoodie/`
  // (hive-style partitions all sort after it) are all the listings.
  const s3 = await WasmTable.openUrl(`s3://${BUCKET}/${V9}`, s3Options());
  assert.deepEqual(await s3.fileGroups(), byManifest);
  assert.equal(s3.io().lists, 2);
  // The fault server's pages hold 3 keys: the first page past `.hoodie/` stops inside the
  // first partition, which and every one after it are then listed one by one.
  faults.reset();
  const paged = await WasmTable.openUrl(`${faults.url}/s3/${V9}`, { listing: 's3' });
  assert.deepEqual(await paged.fileGroups(), byManifest);
  const lists = faults.log.filter((e) => e.query.includes('list-type=2')).map((e) => new URLSearchParams(e.query));
  assert.deepEqual(lists.filter((q) => q.has('start-after')).map((q) => q.get('start-after')), [`${V9}/.hoodie0`]);
  const prefixes = new Set(lists.filter((q) => !q.has('start-after')).map((q) => q.get('prefix').slice(V9.length + 1)));
  assert.deepEqual([...prefixes].sort(), ['', '.hoodie/timeline/', 'region=apac/', 'region=eu/', 'region=us/']);
});

test('presigned URLs: a 401 or 403 asks the callback once more for a fresh URL', async () => {
  faults.reset();
  const asked = new Map();
  let signed = 0;
  // The first URL handed out for each (method, key) has expired; the next ones are good.
  const presign = (method, key, page) => {
    if (method === 'LIST') {
      const q = new URLSearchParams({ 'list-type': '2', prefix: key });
      if (page?.delimiter) q.set('delimiter', page.delimiter);
      if (page?.continuationToken) q.set('continuation-token', page.continuationToken);
      return `${faults.url}/s3?${q}`;
    }
    const k = `${method} ${key}`;
    asked.set(k, (asked.get(k) ?? 0) + 1);
    signed += 1;
    const q = new URLSearchParams({ sig: String(signed) });
    if (asked.get(k) === 1) q.set('expired', signed % 2 ? '401' : '403');
    return `${faults.url}/expiring/${key}?${q}`;
  };
  const table = await WasmTable.openUrl(`s3://bucket/${V9}`, {}, undefined, presign);
  await checkSnapshot(V9, table, exp(V9));
  const refused = faults.log.filter((e) => e.status === 401 || e.status === 403);
  assert.ok(refused.some((e) => e.status === 401) && refused.some((e) => e.status === 403), JSON.stringify(refused));
  for (const r of refused) {
    assert.ok(asked.get(`${r.method} ${r.path}`) >= 2, `${r.method} ${r.path}: the callback was asked again`);
    const after = faults.log.slice(faults.log.indexOf(r));
    assert.ok(after.some((e) => e.method === r.method && e.path === r.path && !e.query.includes('expired') && e.status < 300), `${r.method} ${r.path} was asked again with a fresh URL`);
  }
});

test('429 with Retry-After: the retry waits what the server asked', async () => {
  faults.reset();
  const table = await WasmTable.openUrl(`${faults.url}/throttle/${COW9}`, { listing: 'autoindex' });
  await checkSnapshot(COW9, table, exp(COW9));
  const throttled = faults.log.filter((e) => e.status === 429);
  assert.ok(throttled.length > 0, 'the server throttled data reads');
  for (const t of throttled) {
    const retry = faults.log.find((e) => e !== t && e.method === t.method && e.path === t.path && e.range === t.range && e.status !== 429);
    assert.ok(retry, `${t.path} ${t.range} was retried`);
    // A lower bound only: a busy machine makes the wait longer, never shorter. Without the
    // header the first backoff is 100 ms.
    assert.ok(retry.at - t.at >= 990, `${t.path} ${t.range}: retried after ${retry.at - t.at} ms, Retry-After said 1 s`);
  }
  // No retries: the 429 is the answer, named.
  faults.reset();
  const once = await WasmTable.openUrl(`${faults.url}/throttle/${COW9}`, { listing: 'autoindex', retries: 0 });
  await assert.rejects(once.readJson({}, true), (e) => e.code === 'IO' && /429/.test(e.message));
});

test('the in-flight cap: never more requests at the server than `concurrency`', { timeout: 60_000 }, async () => {
  // /slow/ holds every data request until the test lets go: the requests held at once are
  // exactly those the client has in flight, whatever the machine's speed.
  const held = (log) => log.filter((e) => isDataFile(e) && e.status === 0 && !e.aborted).length;
  for (const concurrency of [1, 2, undefined]) {
    faults.reset();
    const table = await WasmTable.openUrl(`${faults.url}/slow/${COW9}`, { listing: 'autoindex', ...(concurrency ? { concurrency } : {}) });
    const reading = checkSnapshot(COW9, table, exp(COW9));
    // The default (8) lets at least 3 of the table's data files be asked at once.
    await faults.until((log) => held(log) >= (concurrency ?? 3));
    faults.releaseSlow();
    await reading;
    if (concurrency) assert.equal(faults.maxInFlight, concurrency, `concurrency ${concurrency}`);
    else assert.ok(faults.maxInFlight >= 3 && faults.maxInFlight <= 8, `default: ${faults.maxInFlight} in flight`);
  }
});

// ---- hostile servers: errors, never a panic, a hang or unbounded memory

test('hostile: a 206 longer than the range asked is an IO error', async () => {
  const table = await WasmTable.openUrl(`${faults.url}/long206/${COW9}`, { listing: 'autoindex' });
  await assert.rejects(table.readJson({}, true), (e) => {
    assert.equal(e.code, 'IO', e.message);
    assert.match(e.message, /longer than the \d+ bytes asked/);
    return true;
  });
});

test('hostile: Range ignored without a length is read to 32 MiB at most', async () => {
  const table = await WasmTable.openUrl(`${faults.url}/endless/${COW9}`, { listing: 'autoindex' });
  await assert.rejects(table.readJson({}, true), (e) => {
    assert.equal(e.code, 'UNSUPPORTED', e.message);
    assert.match(e.message, /ignores Range .* over 32 MiB/);
    return true;
  });
});

test('hostile: a redirect to another origin is refused with the table\'s headers, followed without', async () => {
  const other = await startFaultServer(tables);
  try {
    faults.redirectTo = other.url;
    const url = `${faults.url}/redirect/${COW9}`;
    const withKey = await WasmTable.openUrl(url, { listing: 'autoindex', headers: { 'x-api-key': 'k3y' } });
    await assert.rejects(withKey.readJson({}, true), (e) => {
      assert.equal(e.code, 'IO', e.message);
      assert.match(e.message, /another origin/);
      assert.doesNotMatch(e.message, /s3cr3t/);
      return true;
    });
    assert.equal(other.log.length, 0, 'the other origin saw no request');
    const open = await WasmTable.openUrl(url, { listing: 'autoindex' });
    await checkSnapshot(COW9, open, exp(COW9));
    assert.ok(other.log.length > 0);
  } finally {
    await other.stop();
  }
});

test('hostile: a listing that fans out without end stops at its bounds', async () => {
  faults.reset();
  const table = await WasmTable.openUrl(`${faults.url}/fanout/${COW9}`, { listing: 'autoindex' });
  await assert.rejects(table.readJson({ useMetadataTable: false }, true), (e) => {
    assert.equal(e.code, 'UNSUPPORTED', e.message);
    assert.match(e.message, /listing/);
    return true;
  });
  assert.ok(faults.log.length <= 5_100, `${faults.log.length} requests`);
});

test('hostile: a network error names the object without the query', async () => {
  const closed = await startFaultServer(tables);
  await closed.stop(); // its port now refuses connections
  await assert.rejects(WasmTable.openUrl(`${closed.url}/ok/${COW9}?sig=s3cr3t-token`, { listing: 'autoindex', retries: 0 }), (e) => {
    assert.equal(e.code, 'IO', e.message);
    assert.match(e.message, /127\.0\.0\.1/);
    assert.doesNotMatch(e.message, /s3cr3t/);
    return true;
  });
});

// A zip of one deflated entry `t/f` of 1000 bytes that declares `declared` bytes.
function zipDeclaring(declared) {
  const data = deflateRawSync(Buffer.alloc(1000, 97));
  const name = Buffer.from('t/f');
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(20, 4);
  local.writeUInt16LE(8, 8); // deflate
  local.writeUInt32LE(crc32(Buffer.alloc(1000, 97)), 14);
  local.writeUInt32LE(data.length, 18);
  local.writeUInt32LE(declared, 22);
  local.writeUInt16LE(name.length, 26);
  const central = Buffer.alloc(46);
  central.writeUInt32LE(0x02014b50, 0);
  central.writeUInt16LE(20, 4);
  central.writeUInt16LE(20, 6);
  central.writeUInt16LE(8, 10);
  local.copy(central, 16, 14, 26); // crc and sizes
  central.writeUInt16LE(name.length, 28);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(1, 8);
  end.writeUInt16LE(1, 10);
  end.writeUInt32LE(46 + name.length, 12);
  end.writeUInt32LE(30 + name.length + data.length, 16);
  return Buffer.concat([local, name, data, central, name, end]);
}

test('hostile: a zip declaring a 4 GiB entry is an error before allocating, not an abort', async () => {
  await assert.rejects(WasmTable.openZip(zipDeclaring(0xfffffffe), 'huge.zip'), (e) => {
    assert.equal(e.code, 'UNSUPPORTED', e.message);
    assert.match(e.message, /512 MiB/);
    return true;
  });
  // The same zip declaring its true size opens as far as the table (it holds none).
  await assert.rejects(WasmTable.openZip(zipDeclaring(1000), 'small.zip'), (e) => e.code === 'NOT_FOUND');
});

test('stream(): one Arrow IPC stream per batch, then undefined', async () => {
  const table = await WasmTable.openUrl(`${nginx.url}/${COW9}`, {});
  const s = table.stream({ batchSize: 7 });
  let chunks = 0;
  for (let b = await s.next(); b !== undefined; b = await s.next()) {
    assert.ok(b instanceof Uint8Array && b.length > 0);
    chunks++;
  }
  assert.ok(chunks > 1, `${chunks} chunks`);
  assert.equal(await s.next(), undefined);
});
