// Measurements of the wasm build in Node for tests/bench/race.sh; each prints one JSON line.
//
//   node wasm_node.mjs startup [RUNS] [MODULE]   compile + instantiate of the read module, the
//                                                one the package's import loads (MODULE=hudi_edge:
//                                                the full one; a fresh process per run: require()
//                                                of the bindings)
//   node wasm_node.mjs first-rows TABLE FILTER [DELAY_MS]
//                                                open → first batch of a filtered stream(),
//                                                twice in one process (again_ms: compiled),
//                                                every storage call delayed DELAY_MS (20);
//                                                TRACE=1 prints each call; PREFETCH=0 opens
//                                                without the metadata table's prefetch
//   node wasm_node.mjs first-rows-pkg TABLE FILTER [DELAY_MS]
//                                                the same through the npm package, cold: the
//                                                clock starts before the package is imported
//                                                (which starts compiling the module) and stops
//                                                at the first batch of `stream()` after
//                                                `openStorage`; again_ms: a second table in
//                                                the same process. The package is
//                                                $HUDI_EDGE_PKG_DIST (default pkg-config/dist)
//   node wasm_node.mjs first-rows-hyparquet TABLE FILE [FILTER_JSON] [DELAY_MS]
//                                                the peer: hyparquet (tests/js) reading FILE of
//                                                TABLE (as `hudi-edge plan` names it), cold:
//                                                the clock starts before it is imported; the
//                                                rows matching FILTER_JSON (hyparquet's filter,
//                                                e.g. '{"id":500000}'), or its first 10 rows
//   node wasm_node.mjs open-cost TABLE           what the viewer asks of the npm package on
//                                                open: the timeline without operations,
//                                                info() and fileGroups(); then (apart) the
//                                                timeline with operations
//   node wasm_node.mjs open-cost-http [FIXTURE]  the same by URL from a loopback nginx with
//                                                the listing manifest (default: the v9 MOR
//                                                sample)
//   node wasm_node.mjs upsert TABLE [N]          N (12) 100-row upserts (the keys of
//                                                tests/bench/write_upsert.sh: 50 existing with
//                                                a later ts, 50 new) into a copy of TABLE, each
//                                                a new open sharing one metadata cache as the
//                                                edge worker does, the metadata table's
//                                                compaction held off; wall ms and the process's
//                                                user CPU of upserts 3..N (no latency, local
//                                                files). Best with --no-liftoff
//   node wasm_node.mjs compact TABLE [N]         the metadata table's compaction in wasm: on a
//                                                copy of TABLE, an upsert that compacts first
//                                                (what the table's writer left since its last
//                                                compaction), N (10) upserts, then one that
//                                                compacts again (N upserts' worth of logs);
//                                                wall ms, requests and bytes of each, beside
//                                                an upsert's without compaction
//
// The module is $HUDI_EDGE_WASM_NODE (default $CARGO_TARGET_DIR or target, /wasm-node).
// first-rows and first-rows-pkg list from an index of the table made before the clock starts
// (tests/js/fs_storage.mjs `listIndex`), as an object store answers a LIST; LISTING=walk walks
// the directories on each list instead (in this process, inside the timed window).
import { createRequire } from 'node:module';
import { join, dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { fsStorage } from '../js/fs_storage.mjs';
import { hyparquetRows } from './hyparquet_peer.mjs';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const wasmDir = process.env.HUDI_EDGE_WASM_NODE ?? join(process.env.CARGO_TARGET_DIR ?? join(repo, 'target'), 'wasm-node');
const bindings = join(wasmDir, 'hudi_edge.js');
const require = createRequire(import.meta.url);
const [what, ...args] = process.argv.slice(2);
const listing = process.env.LISTING === 'walk' ? 'walk' : 'index';
const benchStorage = (table) => fsStorage(table, { listIndex: listing === 'index' });
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Starts V8's CPU profiler in this process; the returned function stops it and answers the profile. */
async function startProfile() {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  await session.post('Profiler.start');
  return async () => (await session.post('Profiler.stop')).profile;
}

/** Every call of `storage` waits `ms` first, as a remote store's round trip would; with
 * TRACE=1 each call is printed on stderr (start ms, calls in flight, what). `calls` counts
 * the calls and the rounds: calls started while none was in flight. */
function delayed(storage, ms) {
  const wait = () => new Promise((r) => setTimeout(r, ms));
  const t0 = performance.now();
  let inFlight = 0;
  const out = { ...storage, calls: { requests: 0, rounds: 0 } };
  for (const k of ['get', 'head', 'list']) {
    out[k] = async (...a) => {
      if (process.env.TRACE === '1') {
        const at = (performance.now() - t0).toFixed(0).padStart(5);
        console.error(`${at} ms  ${String(inFlight).padStart(2)} in flight  ${k} ${a.join(' ')}`);
      }
      out.calls.requests++;
      if (inFlight === 0) out.calls.rounds++;
      inFlight++;
      try {
        await wait();
        return await storage[k](...a);
      } finally {
        inFlight--;
      }
    };
  }
  return out;
}

if (what === 'startup') {
  const runs = Number(args[0] ?? 5);
  const module = args[1] ?? 'hudi_edge_read';
  const times = [];
  for (let i = 0; i < runs; i++) {
    const script = `const t=performance.now();require(${JSON.stringify(join(wasmDir, `${module}.js`))});console.log(performance.now()-t)`;
    times.push(Number(execFileSync(process.execPath, ['-e', script]).toString().trim()));
  }
  console.log(JSON.stringify({ compile_instantiate_ms: median(times), runs, module }));
} else if (what === 'first-rows') {
  const [table, filter, delay = '20'] = args;
  // Opened to query: the metadata table comes with the open (PREFETCH=0: without).
  const prefetch = process.env.PREFETCH !== '0';
  const { WasmTable } = require(bindings);
  const firstRows = async () => {
    const storage = delayed(benchStorage(table), Number(delay));
    const t0 = performance.now();
    const t = await WasmTable.openJs(storage, undefined, undefined, undefined, prefetch);
    const stream = t.stream({ filters: [filter] });
    const first = await stream.next();
    const ms = performance.now() - t0;
    const io = t.io();
    t.free();
    return { ms, got_rows: first !== undefined, io };
  };
  // The first query also pays V8's lazy compilation of every wasm function it reaches; the
  // second (a new table object, nothing cached) shows the engine and the round trips alone.
  // PROFILE=FILE: a CPU profile of the cold run, as first-rows-pkg's (the module already compiled).
  const profiler = process.env.PROFILE ? await startProfile() : undefined;
  const cold = await firstRows();
  if (profiler) writeFileSync(process.env.PROFILE, JSON.stringify(await profiler()));
  const warm = await firstRows();
  const { io } = cold;
  console.log(JSON.stringify({ ms: cold.ms, again_ms: warm.ms, got_rows: cold.got_rows && warm.got_rows, requests: io.requests, round_trips: io.roundTrips, bytes: io.bytes, prefetch, listing }));
} else if (what === 'first-rows-pkg') {
  const [table, filter, delay = '20'] = args;
  const dist = process.env.HUDI_EDGE_PKG_DIST ?? join(repo, 'pkg-config', 'dist');
  // The app's apache-arrow (a peer dependency) is loaded before the clock starts: ~100-400 ms
  // of JS that is the app's whatever engine it uses.
  const arrowStart = performance.now();
  // (its ESM build, as the package resolves it: through a package file that imports only it)
  await import(join(dist, 'rows-arrow.js'));
  const arrowMs = performance.now() - arrowStart;
  // A storage for each run, made before its clock starts.
  const storages = [benchStorage(table), benchStorage(table)];
  // PROFILE=FILE: a CPU profile of the cold run alone (node:inspector, 0.1 ms samples), for
  // cpuprofile_summary.mjs; the run is slower under the profiler.
  const profiler = process.env.PROFILE ? await startProfile() : undefined;
  const t0 = performance.now();
  const { HudiTable } = await import(join(dist, 'node.js'));
  const firstRows = async (start) => {
    const t = await HudiTable.openStorage(delayed(storages.shift(), Number(delay)), { prefetchMetadataTable: true });
    let got = false;
    for await (const batch of t.stream({ filters: [filter] })) {
      got = batch.numRows >= 0;
      break;
    }
    const ms = performance.now() - start;
    const io = t.io();
    t.close();
    return { ms, got_rows: got, io };
  };
  const cold = await firstRows(t0);
  if (profiler) writeFileSync(process.env.PROFILE, JSON.stringify(await profiler()));
  const warm = await firstRows(performance.now());
  const { io } = cold;
  console.log(JSON.stringify({ ms: cold.ms, again_ms: warm.ms, got_rows: cold.got_rows && warm.got_rows, requests: io.requests, round_trips: io.roundTrips, bytes: io.bytes, arrow_import_ms: Math.round(arrowMs), listing, dist }));
} else if (what === 'first-rows-hyparquet') {
  // The peer of first-rows-pkg: hyparquet (a Parquet reader in plain JS) on the one file of
  // TABLE a query reads, cold in a fresh process, every request delayed as there.
  const [table, file, filterJson, delay = '20'] = args;
  const filter = filterJson ? JSON.parse(filterJson) : undefined;
  const fromTests = createRequire(join(repo, 'tests', 'js', 'package.json'));
  // It only asks for the file's size and ranges: no listing index.
  const storage = delayed(fsStorage(table, { readOnly: true }), Number(delay));
  const t0 = performance.now();
  const hyparquet = await import(pathToFileURL(fromTests.resolve('hyparquet')));
  const { compressors } = await import(pathToFileURL(fromTests.resolve('hyparquet-compressors')));
  const rows = await hyparquetRows(hyparquet, compressors, storage, file, filter);
  const ms = performance.now() - t0;
  const version = JSON.parse(readFileSync(join(dirname(fromTests.resolve('hyparquet')), '..', 'package.json'), 'utf8')).version;
  console.log(JSON.stringify({ ms, rows: rows.length, requests: storage.calls.requests, round_trips: storage.calls.rounds, file, filter, hyparquet: version }));
} else if (what === 'open-cost' || what === 'open-cost-http') {
  // Through the npm package (pkg-config/dist, `npm run build`), as the viewer calls it: a
  // table directory, or (open-cost-http) a fixture by URL from a loopback nginx serving the
  // listing manifest `hudi-edge manifest` writes, as a static host would.
  const [table] = args;
  const { HudiTable } = await import(join(repo, 'pkg-config', 'dist', 'node.js'));
  let t, via = 'files';
  let stop = async () => {};
  if (what === 'open-cost') {
    t = await HudiTable.openStorage(fsStorage(table));
  } else {
    const { startNginx, unzippedFixtures } = await import('../web/lib/servers.mjs');
    const nginx = await startNginx({ mounts: { '/tables/': join(unzippedFixtures(), 'tables') } });
    stop = () => nginx.stop();
    t = await HudiTable.open(`${nginx.url}/tables/${table ?? 'sample_table/mor/avro/v9_txns_simple_meta'}`);
    via = 'http+manifest';
  }
  // The first screen (timeline drawn, overview, file layout), then the operations the
  // viewer fills in afterwards (one commit file per completed write).
  await t.timeline({ operations: false });
  await Promise.all([t.info(), t.fileGroups()]);
  const first = t.io();
  await t.timeline({});
  const io = t.io();
  const cost = (x) => ({ requests: x.requests, bytes: x.bytes, round_trips: x.roundTrips, by_purpose: x.byPurpose });
  console.log(JSON.stringify({ via, ...cost(first), with_operations: cost(io) }));
  t.close();
  await stop();
} else if (what === 'upsert' || what === 'compact') {
  const [table, n = what === 'upsert' ? '12' : '10'] = args;
  const { WasmTable, WasmMdtCache } = require(bindings);
  const arrow = createRequire(join(repo, 'tests', 'js', 'package.json'))('apache-arrow');
  const copy = mkdtempSync(join(tmpdir(), 'upsert-'));
  execFileSync('cp', ['-a', `${table}/.`, copy]);
  execFileSync('sync'); // the copy's writeback would land inside the timings
  const cache = new WasmMdtCache(64 * 1024 * 1024);
  const open = () => WasmTable.openJs(fsStorage(copy), undefined, undefined, cache.share());
  // 50 existing keys with a later `ts`, and the same rows under 50 new keys.
  const ids = Array.from({ length: 50 }, (_, i) => 7 + 19991 * i);
  const reader = await open();
  const existing = arrow.tableFromIPC(await reader.readArrow({ filters: [`id in (${ids.join(',')})`] }));
  reader.free();
  const data = existing.select(existing.schema.fields.map((f) => f.name).filter((c) => !c.startsWith('_hoodie_')));
  const longs = (values) => arrow.makeVector(BigInt64Array.from(values));
  const updates = data.setChild('ts', longs([...data.getChild('ts')].map((v) => v + 1n)));
  const inserts = data.setChild('id', longs(ids.map((_, i) => BigInt(2_000_000 + i))));
  const input = arrow.tableToIPC(updates.concat(inserts), 'stream');
  const upsert = async (compactAfter) => {
    const t = await open();
    const options = { 'hoodie.metadata.compact.max.delta.commits': String(compactAfter) };
    const r = await t.write(input, { operation: 'upsert', options });
    t.free();
    return r;
  };
  if (what === 'compact') {
    const compaction = async () => {
      const t0 = performance.now();
      const r = await upsert(1);
      if (!r.metadataTable.compaction) throw new Error(`no compaction: ${JSON.stringify(r.metadataTable)}`);
      return { write_ms: Math.round(performance.now() - t0), requests: r.io.requests, bytes: r.io.bytes };
    };
    const backlog = await compaction();
    const plain = [];
    for (let i = 0; i < Number(n); i++) {
      const t0 = performance.now();
      await upsert(1000);
      plain.push(performance.now() - t0);
    }
    const steady = await compaction();
    rmSync(copy, { recursive: true, force: true });
    console.log(JSON.stringify({ backlog, [`after_${n}_upserts`]: steady, upsert_median_ms: Math.round(median(plain)) }));
    process.exit(0);
  }
  const times = [], cpu = [];
  for (let i = 0; i < Number(n); i++) {
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    const r = await upsert(1000);
    times.push(performance.now() - t0);
    cpu.push(process.cpuUsage(c0).user / 1000);
    if (r.records.inserted + r.records.updated !== 100) throw new Error(`upsert ${i}: ${JSON.stringify(r.records)}`);
  }
  rmSync(copy, { recursive: true, force: true });
  const steady = times.slice(2);
  // User CPU of the process (background compilation and GC threads included).
  console.log(JSON.stringify({ rows: 100, median_ms: median(steady), min_ms: Math.min(...steady), user_cpu_ms: median(cpu.slice(2)), all_ms: times.map(Math.round) }));
} else {
  console.error('usage: node wasm_node.mjs startup|first-rows|open-cost|open-cost-http|upsert|compact ...');
  process.exit(2);
}
