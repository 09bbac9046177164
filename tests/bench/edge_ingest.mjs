// The edge-ingest example worker (pkg-config/examples/edge-ingest) in workerd, committing
// 100-row upserts (50 updates of existing keys, 50 new keys) to the 1M-row Merge-On-Read
// bench table (Spark-written; metadata table with files, column_stats, partition_stats and
// record_index) on moto's S3, with 20 ms added to every storage request by a proxy that also
// counts them. Prints, per commit: the POST's wall time, storage requests (seen by the proxy,
// the worker's open included), the write's dependent round trips and the module's wasm memory;
// then the worker's cold start (the first HEAD, which instantiates the wasm module, against a
// warm one) and workerd's peak RSS. The same upsert through the same tarball in Node, on the
// same proxy, is the peer. Each commit is checked (50 updated, 50 inserted).
//
//   node tests/bench/edge_ingest.mjs [--commits N] [--latency-ms 20] [--server moto|seaweedfs] [--concurrency N] [--mdt-cache-bytes N]
//                                    [--write-options JSON] [--several-writers] [--v8-flags FLAGS] [--open-each-post]
//                                    [--out tests/bench/results/edge_ingest.md] [--dump-trace FILE]
// Needs .ci/setup, the bench table (tests/spark/make_bench_tables.py) and a built pkg-config;
// `--server seaweedfs` (SeaweedFS's S3 gateway instead of moto) needs tests/bench/setup-s3.sh.
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cache, freePort, repo, startLatencyProxy, startMoto } from '../web/lib/servers.mjs';
import { launch, tempDir, removeTemp, waitFor } from '../lib/harness.mjs';
import { installTarball, python, s3Options, startWorker } from '../web/lib/writes.mjs';
import { settled } from '../web/lib/settling-worker.js';
import { execFileSync } from 'node:child_process';

const arg = (name, d) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : d);
const COMMITS = Number(arg('--commits', 7));
const LATENCY = Number(arg('--latency-ms', 20));
const OUT = arg('--out', join(repo, 'tests', 'bench', 'results', 'edge_ingest.md'));
const SERVER = arg('--server', 'moto');
const CONCURRENCY = arg('--concurrency', null); // the worker's S3_CONCURRENCY (its default, 64, when unset)
const MDT_CACHE = arg('--mdt-cache-bytes', null); // the worker's MDT_CACHE_BYTES (its default when unset; 0: off)
const WRITE_OPTIONS = arg('--write-options', null); // the worker's HUDI_WRITE_OPTIONS (JSON), e.g. '{"hoodie.hfile.block.size":"65536"}'
const SEVERAL_WRITERS = process.argv.includes('--several-writers'); // the worker's default: writes under the storage lock
const V8_FLAGS = arg('--v8-flags', null); // workerd's V8 flags, space-separated (e.g. '--no-liftoff': optimized wasm from the start)
const DUMP = arg('--dump-trace', null); // a JSON file for the proxy's trace of every POST
// The worker keeps its table handle between POSTs, running the write's services and
// refreshing the handle after each answer (its default); --open-each-post (KEEP_TABLE_WARM=false) opens and closes one per POST instead.
const OPEN_EACH_POST = process.argv.includes('--open-each-post');
const TABLE = 'bench_mor_v9';
const BUCKET = 'bench';
const tables = join(cache, 'tables');
if (!existsSync(join(tables, TABLE))) throw new Error(`${join(tables, TABLE)} missing: run tests/spark/make_bench_tables.py`);

/** What a proxied request was for, from its method and url (the table's objects). */
function kind({ method, url }) {
  const u = new URL(url, 'http://x');
  const path = decodeURIComponent(u.pathname).replace(`/${BUCKET}/${TABLE}/`, '');
  if (u.searchParams.has('list-type') || u.searchParams.has('prefix')) {
    const prefix = (u.searchParams.get('prefix') ?? '').replace(`${TABLE}/`, '');
    return prefix.startsWith('.hoodie/metadata') ? 'mdt list' : prefix.startsWith('.hoodie') ? 'timeline list' : 'data list';
  }
  const put = method === 'PUT' ? 'put' : method === 'DELETE' ? 'delete' : 'get';
  if (path === '.hoodie/hoodie.properties') return 'properties';
  if (path.startsWith('.hoodie/metadata/')) return `mdt ${put}`;
  if (path.startsWith('.hoodie/.temp/')) return `marker ${put}`;
  if (path.startsWith('.hoodie/')) return `instant ${put}`;
  return `data ${put}`;
}

/** Where a POST's wall time [s, e] went, from the proxy's trace: time with a request at the
 *  store (sent on .. answered), time with requests only in the added latency or in transfer
 *  (arrived .. done, none at the store), and time with nothing in flight — the engine's CPU
 *  in the isolate (plus request signing and the worker's own JSON work). Also per wave: a
 *  wave is a run of requests whose in-flight times overlap (one dependent round trip, or
 *  several that were never apart); the idle time just before it is counted to it. */
function split(trace, s, e) {
  const reqs = trace.filter((r) => r.arrived >= s && r.arrived <= e && r.done);
  const points = [...new Set([s, e, ...reqs.flatMap((r) => [r.arrived, r.sent, r.answered, r.done])])].filter((t) => t >= s && t <= e).sort((a, b) => a - b);
  const total = { store: 0, latency: 0, idle: 0 };
  // Waves: components of [arrived, done].
  const sorted = [...reqs].sort((a, b) => a.arrived - b.arrived);
  const waves = [];
  for (const r of sorted) {
    const w = waves.at(-1);
    if (w && r.arrived <= w.end) {
      w.reqs.push(r);
      w.end = Math.max(w.end, r.done);
    } else waves.push({ start: r.arrived, end: r.done, reqs: [r], store: 0, latency: 0, idleBefore: 0 });
  }
  let wi = 0;
  for (let i = 0; i + 1 < points.length; i++) {
    const [a, b] = [points[i], points[i + 1]];
    const mid = (a + b) / 2;
    const atStore = reqs.some((r) => r.sent <= mid && mid < r.answered);
    const inFlight = reqs.some((r) => r.arrived <= mid && mid < r.done);
    while (wi < waves.length && waves[wi].end <= mid) wi++;
    const w = waves[wi];
    const what = atStore ? 'store' : inFlight ? 'latency' : 'idle';
    total[what] += b - a;
    if (!w) (total.after ??= 0), (total.after += b - a);
    else if (what === 'idle') w.idleBefore += b - a;
    else w[what] += b - a;
  }
  for (const w of waves) {
    w.kinds = {};
    for (const r of w.reqs) w.kinds[kind(r)] = (w.kinds[kind(r)] ?? 0) + 1;
  }
  return { total, waves, requests: reqs.length };
}

/** The phase a wave belongs to, by what its requests were for. */
function phaseOf(w) {
  const k = Object.keys(w.kinds);
  const has = (p) => k.some((x) => x.startsWith(p));
  if (k.every((x) => x === 'properties' || x === 'timeline list')) return 'open';
  if (has('data put')) return 'data PUTs';
  if (has('mdt put')) return 'MDT';
  if (has('mdt get') || has('mdt list') || has('data get')) return 'lookup';
  return 'commit';
}

// The credentials the worker gets too (moto takes any; SeaweedFS is configured with them).
const benchS3 = (url) => ({ ...s3Options(url), accessKeyId: 'bench', secretAccessKey: 'bench' });
const benchOpen = (url) => ({ s3: benchS3(url), ...(CONCURRENCY ? { concurrency: Number(CONCURRENCY) } : {}) });
/** GETs of metadata-table files (not its timeline or listings) in a POST, from the proxy's trace. */
const mdtGets = (r) => r.split.waves.reduce((n, w) => n + (w.kinds['mdt get'] ?? 0), 0);
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const mib = (b) => (b / 2 ** 20).toFixed(1);
const vmHwmKiB = (pid) => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);

/** SeaweedFS (`weed server -s3`: master, volume, filer and S3 gateway in one process) on
 *  loopback, with the bench's credentials. */
async function startSeaweed() {
  const weed = join(cache, 'bin', 'weed');
  if (!existsSync(weed)) throw new Error(`${weed} missing: run tests/bench/setup-s3.sh`);
  const dir = tempDir('weed');
  const identity = (name, accessKey, secretKey) => ({ name, credentials: [{ accessKey, secretKey }], actions: ['Admin', 'Read', 'Write', 'List', 'Tagging'] });
  writeFileSync(join(dir, 's3.json'), JSON.stringify({ identities: [identity('bench', 'bench', 'bench')] }));
  mkdirSync(join(dir, 'data'));
  const p = {};
  for (const k of ['master', 'masterGrpc', 'volume', 'volumeGrpc', 'filer', 'filerGrpc', 's3', 's3Grpc']) p[k] = await freePort();
  const server = launch(
    weed,
    [
      'server', `-dir=${join(dir, 'data')}`, '-ip=127.0.0.1', '-ip.bind=127.0.0.1',
      `-master.port=${p.master}`, `-master.port.grpc=${p.masterGrpc}`, '-master.volumeSizeLimitMB=1024',
      `-volume.port=${p.volume}`, `-volume.port.grpc=${p.volumeGrpc}`,
      `-filer.port=${p.filer}`, `-filer.port.grpc=${p.filerGrpc}`,
      '-s3', `-s3.port=${p.s3}`, `-s3.port.grpc=${p.s3Grpc}`, `-s3.config=${join(dir, 's3.json')}`,
    ],
    { name: 'weed' },
  );
  const url = `http://127.0.0.1:${p.s3}`;
  await waitFor(url, server, 60_000);
  return { url, stop: async () => (await server.stop(), removeTemp(dir)) };
}

const moto = SERVER === 'seaweedfs' ? await startSeaweed() : await startMoto();
const project = installTarball();
let worker;
let proxy;
try {
  const t0 = performance.now();
  execFileSync(python, [join(repo, 'tests', 'http', 's3_load.py'), moto.url, BUCKET, tables, TABLE], {
    env: { ...process.env, AWS_ACCESS_KEY_ID: 'bench', AWS_SECRET_ACCESS_KEY: 'bench', AWS_DEFAULT_REGION: 'us-east-1' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  console.error(`loaded ${TABLE} into ${SERVER} in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  proxy = await startLatencyProxy(moto.url, LATENCY, { trace: true });
  const uri = `s3://${BUCKET}/${TABLE}`;
  const pkg = await import(join(project, 'node_modules', 'hudi-edge', 'dist', 'node.js'));

  // 50 existing rows per commit (different keys each time) and 50 new ids.
  const direct = await pkg.HudiTable.open(uri, { s3: benchS3(moto.url) });
  const batches = [];
  for (let c = 0; c < COMMITS + 1; c++) {
    // Ids spread over the table; the bench table deleted some, so ask for more and keep 50.
    const ids = Array.from({ length: 80 }, (_, k) => 7 + (((c * 80 + k) * 19_991) % 999_983));
    const found = await direct.rows({ filters: [['id', 'in', ids]], columns: ['id', 'ts', 'event_ts', 'event_date', 'amount', 'qty', 'score', 'customer', 'category', 'is_flagged', 'region'] });
    const existing = found.sort((a, b) => Number(a.id) - Number(b.id)).slice(0, 50);
    if (existing.length !== 50) throw new Error(`expected 50 existing rows, got ${existing.length}`);
    const updates = existing.map((r) => ({ ...r, ts: Number(r.ts) + 1, customer: 'edge-update' }));
    const inserts = existing.map((r, k) => ({ ...r, id: 3_000_000 + c * 50 + k, customer: 'edge-new' }));
    batches.push([...updates, ...inserts]);
  }
  direct.close();

  // The worker: the example as is, behind a wrapper that reports the module's wasm memory.
  const dir = join(project, 'bench-worker');
  mkdirSync(dir, { recursive: true });
  cpSync(join(repo, 'pkg-config', 'examples', 'edge-ingest', 'worker.js'), join(dir, 'worker.js'));
  cpSync(join(repo, 'tests', 'web', 'lib', 'settling-worker.js'), join(dir, 'settling.js'));
  cpSync(join(project, 'node_modules'), join(dir, 'node_modules'), { recursive: true });
  writeFileSync(
    join(dir, 'bench.js'),
    `import ingest from './worker.js';
import { settling } from './settling.js';
import { wasmMemoryBytes } from 'hudi-edge';
// GET /__running counts the work the worker hands to ctx.waitUntil after its answers.
const worker = settling(ingest);
export default {
  async fetch(request, env, ctx) {
    const r = await worker.fetch(request, env, ctx);
    const headers = new Headers(r.headers);
    headers.set('x-wasm-memory-bytes', String(wasmMemoryBytes()));
    return new Response(r.body, { status: r.status, headers });
  },
};
`,
  );
  worker = await startWorker(dir, 'bench.js', {
    TABLE_URL: uri,
    S3_ENDPOINT: proxy.url,
    S3_REGION: 'us-east-1',
    S3_ACCESS_KEY_ID: 'bench',
    S3_SECRET_ACCESS_KEY: 'bench',
    S3_FORCE_PATH_STYLE: 'true',
    ...(CONCURRENCY ? { S3_CONCURRENCY: CONCURRENCY } : {}),
    ...(MDT_CACHE !== null ? { MDT_CACHE_BYTES: MDT_CACHE } : {}),
    ...(WRITE_OPTIONS !== null ? { HUDI_WRITE_OPTIONS: WRITE_OPTIONS } : {}),
    // One POST at a time, as writes funnelled through one Durable Object: the single-writer
    // commit the earlier rounds measured, unless --several-writers (the worker's default).
    ...(SEVERAL_WRITERS ? {} : { SINGLE_WRITER: 'true' }),
    ...(OPEN_EACH_POST ? { KEEP_TABLE_WARM: 'false' } : {}),
  }, { v8Flags: V8_FLAGS ? V8_FLAGS.split(/\s+/).filter(Boolean) : [] });
  const head = async () => {
    const s = performance.now();
    await fetch(worker.url, { method: 'HEAD' });
    return performance.now() - s;
  };
  const coldMs = await head();
  const warmMs = median([await head(), await head(), await head()]);

  const post = async (rows) => {
    const before = proxy.stats.requests;
    const upstream = proxy.stats.upstreamMs;
    const s = performance.now();
    const res = await fetch(worker.url, { method: 'POST', body: JSON.stringify(rows) });
    const body = await res.json();
    const end = performance.now();
    const answered = proxy.stats.trace.length;
    const ms = end - s;
    if (res.status !== 200 || body.updated !== 50 || body.inserted !== 50) throw new Error(`POST: ${res.status} ${JSON.stringify(body).slice(0, 400)}`);
    return {
      ms,
      requests: proxy.stats.requests - before,
      motoMs: proxy.stats.upstreamMs - upstream,
      roundTrips: body.io.roundTrips,
      writeRequests: body.io.requests,
      puts: body.io.puts,
      byPurpose: body.io.byPurpose ?? {},
      compaction: body.metadataTableCompaction ?? null,
      cache: body.metadataCache ?? null,
      wasm: Number(res.headers.get('x-wasm-memory-bytes')),
      split: split(proxy.stats.trace, s, end),
      start: s,
      ...(await afterResponse(answered)),
    };
  };
  /** The requests the worker makes after a POST's answer (its write's services, the kept
   *  handle's refresh), waited out before the next POST. */
  const afterResponse = async (from) => {
    await settled(worker.url);
    const reqs = proxy.stats.trace.slice(from);
    const waves = reqs.length ? split(proxy.stats.trace, reqs[0].arrived, Math.max(...reqs.map((r) => r.done ?? r.arrived))).waves.length : 0;
    return { afterAnswer: { requests: reqs.length, waves } };
  };
  const runs = [];
  for (let c = 0; c < COMMITS; c++) runs.push(await post(batches[c]));
  const rss = vmHwmKiB(worker.pid) * 1024;

  // The peer: the same tarball in Node, the same proxy.
  const node = [];
  {
    const rows = batches[COMMITS];
    const before = proxy.stats.requests;
    const s = performance.now();
    const t = await pkg.HudiTable.open(uri, benchOpen(proxy.url));
    const r = await t.upsert(rows);
    t.close();
    if (r.updated !== 50 || r.inserted !== 50) throw new Error(`Node upsert: ${JSON.stringify(r)}`);
    node.push({ ms: performance.now() - s, requests: proxy.stats.requests - before, roundTrips: r.io.roundTrips, compaction: r.metadataTableCompaction });
  }

  const lines = [];
  const out = (s = '') => (console.log(s), lines.push(s));
  out(`# edge-ingest in workerd: 100-row upserts into ${TABLE} (1M rows, record index) on ${SERVER}, +${LATENCY} ms per request`);
  out();
  out(`Command: \`node tests/bench/edge_ingest.mjs --commits ${COMMITS} --latency-ms ${LATENCY}${SERVER === 'moto' ? '' : ` --server ${SERVER}`}${CONCURRENCY ? ` --concurrency ${CONCURRENCY}` : ''}${MDT_CACHE !== null ? ` --mdt-cache-bytes ${MDT_CACHE}` : ''}${WRITE_OPTIONS !== null ? ` --write-options '${WRITE_OPTIONS}'` : ''}${SEVERAL_WRITERS ? ' --several-writers' : ''}${V8_FLAGS ? ` --v8-flags '${V8_FLAGS}'` : ''}\` (${new Date().toISOString().slice(0, 10)}, 2 cores shared).`);
  out(OPEN_EACH_POST
    ? 'Each POST: the worker opens the table (properties + timeline), upserts 50 updates and 50 new keys, closes it (KEEP_TABLE_WARM=false).'
    : 'Each POST: the worker takes the table handle the POST before kept (the first opens it: properties + timeline), upserts 50 updates and 50 new keys; after its answer the worker runs the write\'s table services and refreshes the handle (timeline, schema, metadata-table listings) for the next POST, which the bench waits out (those requests: the last column).');
  out();
  out(`The worker's metadata cache: ${runs[0].cache ? `on, ${mib(runs[0].cache.maxBytes)} MiB budget (MDT_CACHE_BYTES)` : 'off'}.`);
  out();
  out('| commit | POST wall ms | storage requests (proxy) | dependent rounds (waves) | MDT GETs | server busy ms (summed) | write requests | write round trips | wasm memory MiB (high-water) | MDT cache MiB held / hits | metadata-table compaction | after the answer: requests / rounds |');
  out('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|');
  runs.forEach((r, i) =>
    out(`| ${i + 1}${i === 0 ? ' (first)' : ''} | ${r.ms.toFixed(0)} | ${r.requests} | ${r.split.waves.length} | ${mdtGets(r)} | ${r.motoMs.toFixed(0)} | ${r.writeRequests} | ${r.roundTrips} | ${mib(r.wasm)} | ${r.cache ? `${mib(r.cache.bytes)} / ${r.cache.hits - (runs[i - 1]?.cache?.hits ?? 0)}` : '—'} | ${r.compaction ?? ''} | ${r.afterAnswer.requests} / ${r.afterAnswer.waves} |`),
  );
  // Commits that compacted the metadata table first are a different job: reported apart.
  const warm = runs.slice(1).filter((r) => !r.compaction);
  out();
  out(`- median POST (commits after the first, without a metadata-table compaction): **${median(warm.map((r) => r.ms)).toFixed(0)} ms** (target ≤ 300 ms); first ${runs[0].ms.toFixed(0)} ms; the server's own time per POST (median, summed over requests): ${median(warm.map((r) => r.motoMs)).toFixed(0)} ms`);
  const compacting = runs.filter((r) => r.compaction);
  if (compacting.length) out(`- with a metadata-table compaction first: ${compacting.map((r) => `${r.ms.toFixed(0)} ms, ${r.requests} requests`).join('; ')}`);
  const normal = runs.filter((r, i) => !runs.slice(0, i + 1).some((x) => x.compaction));
  out(`- wasm memory high-water before any compaction: **${mib(Math.max(...normal.map((r) => r.wasm)))} MiB**`);
  out(`- storage requests per POST (median): ${median(warm.map((r) => r.requests))}, of them metadata-table GETs (its properties included): ${median(warm.map(mdtGets))}; dependent rounds per POST (median): **${median(warm.map((r) => r.split.waves.length))}** (target ≤ 5); write round trips (median): ${median(warm.map((r) => r.roundTrips))}; after the answer (median): ${median(warm.map((r) => r.afterAnswer.requests))} requests in ${median(warm.map((r) => r.afterAnswer.waves))} rounds`);
  // Where a write's requests go (load does not change these): the median commit's, by purpose.
  const typical = [...warm].sort((a, b) => a.writeRequests - b.writeRequests)[warm.length >> 1];
  const purposes = Object.entries(typical.byPurpose).sort((a, b) => b[1].requests - a[1].requests);
  out(`- the write's ${typical.writeRequests} requests (commit ${runs.indexOf(typical) + 1}; ${typical.puts} PUTs) by purpose: ${purposes.map(([p, io]) => `${p} ${io.requests}`).join(', ')}`);
  out(`- peak wasm memory over all commits: **${mib(Math.max(...runs.map((r) => r.wasm)))} MiB** (target ≤ 64 MB); workerd process peak RSS (runtime included): ${mib(rss)} MiB`);
  out(`- cold start: first HEAD (instantiates the ${mib(readFileSync(join(dir, 'out', 'bench', 'hudi_edge_bg.wasm')).length)} MiB wasm module) ${coldMs.toFixed(0)} ms vs a warm HEAD ${warmMs.toFixed(1)} ms → instantiate ≈ ${(coldMs - warmMs).toFixed(0)} ms; workerd up (module compiled) in ${worker.listeningMs.toFixed(0)} ms`);
  out(`- peer, the same upsert from Node (the tarball, open + upsert, same proxy): ${node[0].ms.toFixed(0)} ms, ${node[0].requests} requests, ${node[0].roundTrips} write round trips${node[0].compaction ? ` (with a metadata-table compaction, ${node[0].compaction})` : ''}`);
  // Where the wall time went (proxy timestamps; see split()).
  out();
  out(`## Where a POST's wall time goes (+${LATENCY} ms per request)`);
  out();
  out('Per POST, from the proxy\'s timestamps: **store** = at least one request at the S3 server; **latency** = requests in flight but none at the server (the added delay, transfer); **engine** = nothing in flight (wasm CPU in the isolate, request signing, the worker\'s JSON). A wave = requests whose in-flight times overlap; the idle time before a wave is its engine time.');
  out();
  out('| commit | wall ms | engine ms | store ms | latency ms | after the last request ms | waves |');
  out('|---:|---:|---:|---:|---:|---:|---:|');
  runs.forEach((r, i) => {
    const t = r.split.total;
    out(`| ${i + 1} | ${r.ms.toFixed(0)} | ${(t.idle - (t.after ?? 0)).toFixed(0)} | ${t.store.toFixed(0)} | ${t.latency.toFixed(0)} | ${(t.after ?? 0).toFixed(0)} | ${r.split.waves.length} |`);
  });
  const phases = ['open', 'lookup', 'data PUTs', 'MDT', 'commit'];
  const perPhase = (r) => {
    const p = Object.fromEntries(phases.map((k) => [k, { requests: 0, engine: 0, store: 0, latency: 0, waves: 0 }]));
    for (const w of r.split.waves) {
      const x = p[phaseOf(w)];
      x.requests += w.reqs.length;
      x.engine += w.idleBefore;
      x.store += w.store;
      x.latency += w.latency;
      x.waves += 1;
    }
    return p;
  };
  out();
  out(`Per phase, median over the ${warm.length} commits after the first without a metadata-table compaction (ms; a phase = the waves whose requests are: open — properties/timeline only; lookup — metadata-table or data reads; data PUTs — any data-file PUT; MDT — metadata-table PUTs; commit — the rest, instants):`);
  out();
  out('| phase | waves | requests | engine ms | store ms | latency ms | wall ms |');
  out('|---|---:|---:|---:|---:|---:|---:|');
  const pp = warm.map(perPhase);
  for (const k of phases) {
    const m = (f) => median(pp.map((p) => f(p[k])));
    out(`| ${k} | ${m((x) => x.waves)} | ${m((x) => x.requests)} | ${m((x) => x.engine).toFixed(0)} | ${m((x) => x.store).toFixed(0)} | ${m((x) => x.latency).toFixed(0)} | ${m((x) => x.engine + x.store + x.latency).toFixed(0)} |`);
  }
  out(`| after the last request | | | ${median(warm.map((r) => r.split.total.after ?? 0)).toFixed(0)} | | | |`);
  out();
  out(`The waves of commit ${runs.indexOf(typical) + 1} (ms from the POST's start):`);
  out();
  out('| wave | starts | engine before | store | latency | requests by kind |');
  out('|---:|---:|---:|---:|---:|---|');
  const s0 = typical.start;
  typical.split.waves.forEach((w, i) =>
    out(`| ${i + 1} | ${(w.start - s0).toFixed(0)} | ${w.idleBefore.toFixed(0)} | ${w.store.toFixed(0)} | ${w.latency.toFixed(0)} | ${Object.entries(w.kinds).map(([k, n]) => `${k} ${n}`).join(', ')} |`),
  );
  if (DUMP) writeFileSync(DUMP, JSON.stringify(runs.map((r) => r.split.waves.map((w) => ({ idleBefore: w.idleBefore, reqs: w.reqs.map((q) => ({ ...q, kind: kind(q) })) }))), null, 1));
  mkdirSync(join(OUT, '..'), { recursive: true });
  writeFileSync(OUT, lines.join('\n') + '\n');
} finally {
  await worker?.stop();
  await proxy?.stop();
  await moto.stop();
  rmSync(project, { recursive: true, force: true });
}
