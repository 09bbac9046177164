// What the write tests share: the v9 tables they write to (a metadata table with files,
// column_stats, partition_stats and record_index), rows for them, the tables loaded into moto,
// the package tarball installed into a scratch project, a workerd worker started from a
// bundle, and the check that after a write the package, PyPI `hudi` (hudi-rs) and the CLI read
// the same rows.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { cache, freePort, repo, unzippedFixtures } from './servers.mjs';
import { lines, sortedJson, tempDir } from '../../lib/harness.mjs';

export const WRITE_TABLES = {
  cow: 'sample_table/cow/v9_txns_simple_overwrite',
  mor: 'sample_table/mor/avro/v9_timebasedkeygen_nonhivestyle',
};
export const S3_CREDS = { accessKeyId: 'AKIDHUDIEDGEWRITE', secretAccessKey: 'hudi-edge-write-secret', region: 'us-east-1' };
export const python = join(cache, 'venv', 'bin', 'python');
export const cliBin = process.env.HUDI_EDGE_BIN ?? join(process.env.CARGO_TARGET_DIR ?? join(repo, 'target'), 'debug', 'hudi-edge');
const here = import.meta.dirname;
export const bin = (name) => join(here, '..', 'node_modules', '.bin', name);

const pad = (n, w = 2) => String(n).padStart(w, '0');

/**
 * `n` rows for a txns table (`cow`: partitioned by region; `mor`: by the timestamp string
 * `ts_str`), keys `${prefix}-${i}` for i in [from, from + n), in `rows()`' conventions.
 * `version` goes into the ordering field and the merchant, so a later version of a key wins.
 */
export function txnRows(kind, n, { from = 0, prefix = 'EDGE', version = 0 } = {}) {
  return Array.from({ length: n }, (_, k) => {
    const i = from + k;
    const day = 1 + (i % 28);
    const hour = i % 24;
    const row = {
      txn_id: `${prefix}-${pad(i, 5)}`,
      account_id: `ACC-${i % 11}`,
      txn_ts: 1_800_000_000_000 + version * 1000 + (i % 1000),
      txn_datetime: `2025-03-${pad(day)}T${pad(hour)}:15:00.000000Z`,
      txn_date: `2025-03-${pad(day)}`,
      amount: `${(i * 37) % 5000}.${pad(i % 100)}`,
      currency: ['USD', 'EUR', 'SGD'][i % 3],
      txn_type: i % 2 ? 'debit' : 'credit',
      merchant_name: `merchant ${i} v${version}`,
      is_international: i % 5 === 0,
      fee_amount: `${i % 10}.50`,
      txn_metadata: JSON.stringify({ batch: version }),
    };
    if (kind === 'cow') row.region = ['us', 'eu', 'apac'][i % 3];
    else row.ts_str = `2025-03-${pad(day)}T${pad(hour)}:15:00.000Z`;
    return row;
  });
}

export const dataOnly = (row) => Object.fromEntries(Object.entries(row).filter(([k]) => !k.startsWith('_hoodie_')));

export { lines, sortedJson };

/** Creates `bucket` on moto and uploads the fixture tables `names` (tests/http/s3_load.py). */
export function loadTables(motoUrl, bucket, names) {
  execFileSync(python, [join(repo, 'tests', 'http', 's3_load.py'), motoUrl, bucket, join(unzippedFixtures(), 'tables'), ...names], {
    env: { ...process.env, ...awsEnv(motoUrl) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/** The AWS_* variables the CLI and hudi-rs (object_store) read. */
export const awsEnv = (motoUrl) => ({
  AWS_ACCESS_KEY_ID: S3_CREDS.accessKeyId,
  AWS_SECRET_ACCESS_KEY: S3_CREDS.secretAccessKey,
  AWS_REGION: S3_CREDS.region,
  AWS_DEFAULT_REGION: S3_CREDS.region,
  AWS_ENDPOINT_URL: motoUrl,
  AWS_ALLOW_HTTP: 'true',
});

export const s3Options = (motoUrl) => ({ endpoint: motoUrl, region: S3_CREDS.region, accessKeyId: S3_CREDS.accessKeyId, secretAccessKey: S3_CREDS.secretAccessKey, forcePathStyle: true });

/** The table's rows as PyPI `hudi` reads them from moto (sorted JSON lines). */
export function hudiRsLines(motoUrl, uri) {
  const out = execFileSync(python, [join(repo, 'tests', 'write', 'hudi_rs_rows.py'), uri], { encoding: 'utf8', env: { ...process.env, ...awsEnv(motoUrl) } });
  return out.split('\n').filter(Boolean).map((l) => sortedJson(JSON.parse(l))).sort();
}

/** The table's rows as the native CLI reads them from moto (sorted JSON lines). */
export function cliLines(motoUrl, uri) {
  const out = execFileSync(cliBin, ['read', uri, '--endpoint', motoUrl, '--region', S3_CREDS.region, '--path-style', '--format', 'jsonl'], {
    encoding: 'utf8',
    env: { ...process.env, ...awsEnv(motoUrl) },
    maxBuffer: 256 << 20,
  });
  return out.split('\n').filter(Boolean).map((l) => sortedJson(JSON.parse(l))).sort();
}

/** Asserts that `packageRows` (the package's `rows()`), PyPI `hudi` and the CLI read the same
 *  rows, meta columns included; returns them as sorted JSON lines. */
export function assertReadersAgree(motoUrl, uri, packageRows, what = uri) {
  const ours = lines(packageRows);
  assert.deepEqual(hudiRsLines(motoUrl, uri), ours, `${what}: PyPI hudi reads what the package reads`);
  assert.deepEqual(cliLines(motoUrl, uri), ours, `${what}: the CLI reads what the package reads`);
  return ours;
}

/** `npm pack` of pkg-config installed into a scratch project; returns the project folder. */
export function installTarball() {
  const pack = tempDir('pack');
  const out = execFileSync('npm', ['pack', '--json', '--pack-destination', pack], { cwd: join(repo, 'pkg-config'), encoding: 'utf8', env: { ...process.env, HUDI_EDGE_PACK_UNOPTIMIZED: '1' } });
  const tarball = join(pack, JSON.parse(out)[0].filename);
  const project = tempDir('consumer');
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error', tarball], { cwd: project, stdio: 'inherit' });
  return project;
}

/** Bundles `entry` (in `dir`, resolving packages from `dir`) as wrangler would, and serves it in
 *  workerd with `bindings` as text bindings (and V8 flags, for measurements only: a deployed
 *  worker cannot set them). `kv: { NAME: 'http://127.0.0.1:PORT' }` binds KV namespaces served
 *  by a local HTTP server (workerd's KV protocol: `GET`/`PUT /<url-encoded key>?urlencoded=true`,
 *  404 for a missing key: startBindingStore('kv')); `r2: { NAME: url }` R2 buckets likewise
 *  (startBindingStore('r2')). Returns { url, pid, scheduled(cron), stop() }: `scheduled` runs the
 *  worker's `scheduled` handler for real (a second worker calls it through a service binding,
 *  as the Cron Trigger would) and resolves to its `{ outcome, noRetry }`. */
export async function startWorker(dir, entry, bindings = {}, { v8Flags = [], kv = {}, r2 = {} } = {}) {
  const name = entry.replace(/\.[mc]?js$/, '');
  execFileSync(
    bin('esbuild'),
    [entry, '--bundle', '--format=esm', '--platform=neutral', '--conditions=workerd,worker,browser', '--main-fields=module,main', '--loader:.wasm=copy', '--asset-names=[name]', `--outdir=out/${name}`, '--log-level=warning'],
    { cwd: dir, stdio: 'inherit' },
  );
  const port = await freePort();
  const texts = [
    ...Object.entries(bindings).map(([k, v]) => `(name = ${JSON.stringify(k)}, text = ${JSON.stringify(String(v))})`),
    ...Object.keys(kv).map((k) => `(name = ${JSON.stringify(k)}, kvNamespace = "store-${k}")`),
    ...Object.keys(r2).map((k) => `(name = ${JSON.stringify(k)}, r2Bucket = "store-${k}")`),
  ].join(', ');
  const kvServices = Object.entries({ ...kv, ...r2 }).map(([k, url]) => `\n    (name = "store-${k}", external = (address = "${new URL(url).host}", http = ())),`).join('');
  const triggerPort = await freePort();
  // Calls the main worker's `scheduled` handler: Fetcher.scheduled() (experimental in workerd).
  mkdirSync(join(dir, 'out'), { recursive: true });
  writeFileSync(join(dir, 'out', 'trigger.js'), `export default { async fetch(request, env) { const cron = new URL(request.url).searchParams.get('cron') ?? '* * * * *'; return Response.json(await env.MAIN.scheduled({ cron })); } };\n`);
  writeFileSync(
    join(dir, 'out', `${name}.capnp`),
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "main", worker = (modules = [(name = "${name}.js", esModule = embed "${name}/${name}.js"), (name = "hudi_edge_bg.wasm", wasm = embed "${name}/hudi_edge_bg.wasm")], compatibilityDate = "2025-06-01", bindings = [${texts}])),
    (name = "trigger", worker = (modules = [(name = "trigger.js", esModule = embed "trigger.js")], compatibilityDate = "2025-06-01", compatibilityFlags = ["service_binding_extra_handlers"], bindings = [(name = "MAIN", service = "main")])),${kvServices}
    # Loopback is refused unless the "internet" service allows it.
    (name = "internet", network = (allow = ["public", "private", "local"])),
  ],
  sockets = [(name = "http", address = "127.0.0.1:${port}", http = (), service = "main"), (name = "trigger", address = "127.0.0.1:${triggerPort}", http = (), service = "trigger")],${v8Flags.length ? `\n  v8Flags = [${v8Flags.map((f) => JSON.stringify(f)).join(', ')}],` : ''}
);
`,
  );
  const proc = spawn(bin('workerd'), ['serve', '--experimental', `${name}.capnp`], { cwd: join(dir, 'out'), stdio: ['ignore', 'inherit', 'inherit'] });
  let exited = false;
  const exit = new Promise((r) => proc.on('exit', () => ((exited = true), r())));
  const url = `http://127.0.0.1:${port}`;
  const startedAt = performance.now();
  for (let i = 0; ; i++) {
    if (exited) throw new Error('workerd exited');
    try {
      await fetch(url, { method: 'OPTIONS' }).then((r) => r.arrayBuffer());
      break;
    } catch (e) {
      if (i > 300) throw e;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return {
    url,
    pid: proc.pid,
    listeningMs: performance.now() - startedAt,
    scheduled: (cron = '*/5 * * * *') => fetch(`http://127.0.0.1:${triggerPort}/?cron=${encodeURIComponent(cron)}`).then((r) => r.json()),
    async stop() {
      if (!exited) {
        proc.kill('SIGTERM');
        await exit;
      }
    },
  };
}

/** What backs a workerd KV namespace (`kind` 'kv') or R2 bucket ('r2') binding in these tests:
 *  an in-memory store behind workerd's protocol for them (KV: `GET`/`PUT /<key>`; R2: a
 *  `cf-r2-request` JSON header, or JSON metadata of `cf-r2-metadata-size` bytes before a `PUT`'s
 *  value; get and put only). Returns { url, store: Map<key, string>, stop() }. */
export async function startBindingStore(kind) {
  const store = new Map();
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (d) => chunks.push(d));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (kind === 'kv') {
        const key = decodeURIComponent(new URL(req.url, 'http://kv').pathname.slice(1));
        if (req.method === 'PUT') return store.set(key, body.toString()), res.end();
        return store.has(key) ? res.end(store.get(key)) : res.writeHead(404).end();
      }
      const metaSize = Number(req.headers['cf-r2-metadata-size'] ?? 0);
      const r = JSON.parse(req.headers['cf-r2-request'] ?? body.subarray(0, metaSize).toString());
      const meta = (key, size) => JSON.stringify({ name: key, version: '1', size, etag: 'e', uploaded: String(Date.now()), storageClass: 'Standard' });
      if (r.method === 'put') {
        const value = body.subarray(metaSize);
        store.set(r.object, value.toString());
        return res.end(meta(r.object, value.length));
      }
      if (r.method !== 'get') return res.writeHead(501).end();
      if (!store.has(r.object)) return res.writeHead(404, { 'cf-r2-error': JSON.stringify({ version: 1, v4code: 10007, message: 'The specified key does not exist.' }) }).end();
      const value = Buffer.from(store.get(r.object));
      const head = Buffer.from(meta(r.object, value.length));
      res.writeHead(200, { 'cf-r2-metadata-size': String(head.length) }).end(Buffer.concat([head, value]));
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${server.address().port}`, store, stop: () => new Promise((r) => server.close(r)) };
}
