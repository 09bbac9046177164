// Sustained ingest through the package at the edge: the edge-ingest example worker
// (pkg-config/examples/edge-ingest) in workerd commits COMMITS upserts of 100 rows (50 updates
// of existing keys spread over the table + 50 new keys) into a 100k-row table on moto's S3,
// +LATENCY ms per storage request (a counting proxy), with the services this engine runs after
// writes at their defaults (clean, archival, inline compaction on Merge-On-Read). The table is
// created by the CLI with a metadata table and record index (as tests/bench/sustained.py
// makes it) and uploaded. At each checkpoint, through the same tarball in Node and the same
// proxy: the POSTs' wall time (median of the last 10), a full scan and a point lookup
// (requests, round trips, bytes, wall time), file groups, objects and bytes on storage, files
// in .hoodie/timeline (and the metadata table's). Last, with --spark-check, the table is
// downloaded and Apache Hudi Spark 1.1.1 reads the same rows as this engine.
//
//   node tests/bench/sustained_edge.mjs [--commits 1000] [--checkpoints 50,250,500,1000]
//        [--type mor|cow|both] [--latency-ms 20] [--spark-check] [--out tests/bench/results/sustained_edge.md]
// Needs .ci/setup and a built pkg-config (npm run build).
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repo, startLatencyProxy, startMoto } from '../web/lib/servers.mjs';
import { removeTemp, tempDir } from '../lib/harness.mjs';
import { installTarball, python, s3Options, startWorker } from '../web/lib/writes.mjs';

const arg = (name, d) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : d);
const COMMITS = Number(arg('--commits', 1000));
const CHECKPOINTS = arg('--checkpoints', '50,250,500,1000').split(',').map(Number).filter((c) => c <= COMMITS);
const TYPES = arg('--type', 'both') === 'both' ? ['mor', 'cow'] : [arg('--type')];
const LATENCY = Number(arg('--latency-ms', 20));
const SPARK = process.argv.includes('--spark-check');
const OUT = arg('--out', join(repo, 'tests', 'bench', 'results', 'sustained_edge.md'));
const ROWS = 100_000;
const BUCKET = 'bench';
const REGIONS = ['ap', 'eu', 'us', 'sa', 'af'];
const env = { ...process.env, AWS_ACCESS_KEY_ID: 'bench', AWS_SECRET_ACCESS_KEY: 'bench', AWS_DEFAULT_REGION: 'us-east-1' };

const bin = join(repo, 'target', 'release', 'hudi-edge');
execFileSync('cargo', ['build', '-q', '--release', '--bin', 'hudi-edge'], { cwd: repo, stdio: 'inherit' });
const key = (i) => `K${String(i).padStart(7, '0')}`;
const row = (i, ts) => ({ id: key(i), ts, region: REGIONS[i % REGIONS.length], v: (i % 1000) / 7, note: `n${ts}` });
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
/** A seeded generator (Park–Miller), so every run upserts the same keys. */
const random = ((s) => () => (s = (s * 48_271) % 2_147_483_647) / 2_147_483_647)(7);

/** Objects and bytes under s3://bench/NAME/, and the files of both active timelines. */
function storage(motoUrl, name) {
  const out = execFileSync(python, ['-c', `
import boto3, json, sys
from botocore.config import Config
s3 = boto3.client("s3", endpoint_url=sys.argv[1], config=Config(s3={"addressing_style": "path"}))
objects = size = timeline = mdt_timeline = 0
for page in s3.get_paginator("list_objects_v2").paginate(Bucket="${BUCKET}", Prefix=sys.argv[2] + "/"):
    for o in page.get("Contents", []):
        objects += 1
        size += o["Size"]
        rest = o["Key"][len(sys.argv[2]) + 1:]
        if rest.startswith(".hoodie/timeline/") and "/" not in rest[len(".hoodie/timeline/"):]:
            timeline += 1
        if rest.startswith(".hoodie/metadata/.hoodie/timeline/") and "/" not in rest[len(".hoodie/metadata/.hoodie/timeline/"):]:
            mdt_timeline += 1
print(json.dumps([objects, size, timeline, mdt_timeline]))
`, motoUrl, name], { env, encoding: 'utf8' });
  return JSON.parse(out);
}

const moto = await startMoto();
const project = installTarball();
const proxy = await startLatencyProxy(moto.url, LATENCY);
const pkg = await import(join(project, 'node_modules', 'hudi-edge', 'dist', 'node.js'));
const s3 = (url) => ({ ...s3Options(url), accessKeyId: 'bench', secretAccessKey: 'bench' });
const lines = [];
const out = (s = '') => (console.log(s), lines.push(s));
out(`# Sustained ingest at the edge: the edge-ingest worker in workerd, ${COMMITS} commits of 100 rows into a 100k-row table on moto's S3, +${LATENCY} ms per request`);
out();
out(`Command: \`node tests/bench/sustained_edge.mjs --commits ${COMMITS} --checkpoints ${CHECKPOINTS.join(',')}${SPARK ? ' --spark-check' : ''}\` (${new Date().toISOString().slice(0, 16)}Z, 2 cores shared with other work). Each POST: the worker opens the table, upserts 50 updates of existing keys (seeded random, spread over the table) and 50 new keys, runs the services due after the commit (defaults: clean, archival, inline compaction on Merge-On-Read), closes the table. Measures at a checkpoint go through the same tarball in Node and the same proxy.`);
const work = tempDir('sustained-edge');
let worker;
try {
  for (const type of TYPES) {
    const name = `sustained_${type}`;
    const local = join(work, name);
    execFileSync(bin, ['create', local, '--type', type, '--columns', 'id STRING NOT NULL, ts BIGINT, region STRING, v DOUBLE, note STRING',
      '--record-key', 'id', '--partition-by', 'region', '--ordering', 'ts', '--option', 'hoodie.metadata.record.index.enable=true']);
    const input = join(work, `in_${type}.jsonl`);
    writeFileSync(input, Array.from({ length: ROWS }, (_, i) => JSON.stringify(row(i, 0))).join('\n') + '\n');
    execFileSync(bin, ['write', local, '--input', input, '--operation', 'insert']);
    execFileSync(python, [join(repo, 'tests', 'http', 's3_load.py'), moto.url, BUCKET, work, name], { env, stdio: ['ignore', 'ignore', 'inherit'] });
    const uri = `s3://${BUCKET}/${name}`;
    const dir = join(project, `worker-${type}`);
    mkdirSync(dir, { recursive: true });
    cpSync(join(repo, 'pkg-config', 'examples', 'edge-ingest', 'worker.js'), join(dir, 'worker.js'));
    cpSync(join(project, 'node_modules'), join(dir, 'node_modules'), { recursive: true });
    worker = await startWorker(dir, 'worker.js', {
      TABLE_URL: uri, S3_ENDPOINT: proxy.url, S3_REGION: 'us-east-1', S3_ACCESS_KEY_ID: 'bench',
      S3_SECRET_ACCESS_KEY: 'bench', S3_FORCE_PATH_STYLE: 'true', SINGLE_WRITER: 'true',
      // Services inside each POST, so that its answer reports them (counted below).
      KEEP_TABLE_WARM: 'false',
    });
    let next = ROWS;
    const walls = [];
    const services = {};
    const results = [];
    for (let n = 1; n <= COMMITS; n++) {
      const picked = new Set();
      while (picked.size < 50) picked.add(Math.floor(random() * next));
      const rows = [...[...picked].map((i) => row(i, n)), ...Array.from({ length: 50 }, (_, k) => row(next + k, n))];
      next += 50;
      const s = performance.now();
      const res = await fetch(worker.url, { method: 'POST', body: JSON.stringify(rows) });
      const body = await res.json();
      walls.push(performance.now() - s);
      if (res.status !== 200 || body.updated !== 50 || body.inserted !== 50) throw new Error(`${type} commit ${n}: ${res.status} ${JSON.stringify(body).slice(0, 400)}`);
      if (body.serviceErrors?.length) throw new Error(`${type} commit ${n}: service errors ${JSON.stringify(body.serviceErrors)}`);
      for (const [k, ran] of [['clean', body.cleans?.length], ['archival', body.archival], ['compaction', body.compaction?.completed?.length]]) {
        if (ran) services[k] = (services[k] ?? 0) + 1;
      }
      if (!CHECKPOINTS.includes(n)) continue;
      const measure = async (options) => {
        const before = proxy.stats.requests;
        const s = performance.now();
        const t = await pkg.HudiTable.open(uri, { s3: s3(proxy.url) });
        const rows = await t.read(options);
        const io = t.io();
        const groups = options.filters ? null : (await t.fileGroups()).partitions?.reduce((a, p) => a + p.fileGroups.length, 0);
        t.close();
        return { rows: rows.numRows, requests: proxy.stats.requests - before, roundTrips: io.roundTrips, bytes: io.bytes, ms: performance.now() - s, groups };
      };
      const scan = await measure({});
      const lookup = await measure({ filters: [['id', '=', key(Math.floor(random() * next))]] });
      if (lookup.rows !== 1) throw new Error(`${type} commit ${n}: the lookup found ${lookup.rows} rows`);
      const [objects, bytes, timeline, mdtTimeline] = storage(moto.url, name);
      results.push({
        commit: n, rows: scan.rows, post_ms_median: Math.round(median(walls.slice(-10))), scan_requests: scan.requests,
        scan_round_trips: scan.roundTrips, scan_bytes: scan.bytes, scan_ms: Math.round(scan.ms), lookup_requests: lookup.requests,
        lookup_round_trips: lookup.roundTrips, lookup_ms: Math.round(lookup.ms), file_groups: scan.groups, objects_on_storage: objects,
        bytes_on_storage: bytes, timeline_files: timeline, mdt_timeline_files: mdtTimeline,
      });
      console.error(JSON.stringify({ type, ...results.at(-1) }));
      if (results.at(-1).rows !== ROWS + 50 * n) throw new Error(`${type} commit ${n}: ${results.at(-1).rows} rows, expected ${ROWS + 50 * n}`);
    }
    await worker.stop();
    worker = undefined;
    out();
    out(`## ${type === 'mor' ? 'Merge-On-Read' : 'Copy-On-Write'}`);
    out();
    out(`Services that ran after commits: ${JSON.stringify(services)}.`);
    out();
    out(`| ${type} | ${results.map((r) => `commit ${r.commit}`).join(' | ')} | ${results.at(-1).commit} / ${results[0].commit} |`);
    out(`|---|${results.map(() => '---:|').join('')}---:|`);
    for (const k of Object.keys(results[0]).filter((k) => k !== 'commit')) {
      const v = results.map((r) => r[k]);
      out(`| ${k} | ${v.map((x) => x.toLocaleString('en-US')).join(' | ')} | ${(v.at(-1) / v[0]).toFixed(2)}× |`);
    }
    if (SPARK) {
      const copy = join(work, `${name}_copy`);
      execFileSync(python, ['-c', `
import boto3, os, sys
from botocore.config import Config
s3 = boto3.client("s3", endpoint_url=sys.argv[1], config=Config(s3={"addressing_style": "path"}))
for page in s3.get_paginator("list_objects_v2").paginate(Bucket="${BUCKET}", Prefix=sys.argv[2] + "/"):
    for o in page.get("Contents", []):
        path = os.path.join(sys.argv[3], o["Key"][len(sys.argv[2]) + 1:])
        os.makedirs(os.path.dirname(path), exist_ok=True)
        s3.download_file("${BUCKET}", o["Key"], path)
`, moto.url, name, copy], { env });
      const sortLines = (text) => text.split('\n').filter(Boolean).map((l) => JSON.stringify(JSON.parse(l), Object.keys(JSON.parse(l)).sort())).sort();
      const ours = sortLines(execFileSync(bin, ['read', copy, '--format', 'oracle-jsonl'], { encoding: 'utf8', maxBuffer: 1 << 30 }));
      const spark = sortLines(execFileSync('flock', ['/tmp/spark.lock', join(repo, 'tests', 'spark', 'run.sh'), join(repo, 'tests', 'spark', 'read_table.py'), copy],
        { encoding: 'utf8', maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'ignore'] }));
      const same = ours.length === spark.length && ours.every((l, i) => l === spark[i]);
      out();
      out(`Apache Hudi Spark 1.1.1 on the table after commit ${COMMITS}: ${spark.length} rows, ${same ? 'the same rows as this engine' : `**different** from this engine's ${ours.length}`}.`);
      if (!same) process.exitCode = 1;
    }
  }
  writeFileSync(OUT, lines.join('\n') + '\n');
} finally {
  await worker?.stop();
  await proxy.stop();
  await moto.stop();
  removeTemp(work);
}
