// Real servers for the JS tests: a loopback nginx (Debian's) serving the fixture tables
// unzipped, with JSON directory listings, byte ranges, CORS, a 403 area, a slow area and a
// corrupted-table area; a latency proxy (benchmarks); the moto S3 server (PyPI).
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import { createServer as netServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NGINX, cliBin, requireBinary, tempDir } from '../../lib/harness.mjs';

export const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const fixtures = process.env.HUDI_EDGE_FIXTURES ?? join(repo, 'tests', 'data', 'fixtures');
export const generated = join(repo, 'tests', 'data', 'generated');
export const cache = process.env.HUDI_EDGE_CACHE ?? join(homedir(), '.cache', 'hudi-edge');

function zipsUnder(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    return e.isDirectory() ? zipsUnder(p) : e.name.endsWith('.zip') ? [p] : [];
  });
}

/**
 * Every fixture table unzipped once into a shared directory (keyed by the zips' contents;
 * made atomically), each with a manifest the native CLI wrote:
 * `<root>/tables/sample_table/cow/v9_txns_simple_meta/`, `<root>/generated/v9_archive_mor/`.
 */
export function unzippedFixtures() {
  const zips = [
    ...zipsUnder(join(fixtures, 'tables')).map((z) => [z, join('tables', relative(join(fixtures, 'tables'), dirname(z)))]),
    ...zipsUnder(generated).map((z) => [z, 'generated']),
  ].sort();
  // Keyed by the zips' bytes and the manifest format (version 1) the CLI writes.
  const key = createHash('sha1').update('manifests by the CLI, version 1\n');
  for (const [z, d] of zips) key.update(`${d}/${relative(repo, z)}\n`).update(readFileSync(z));
  const root = join(tmpdir(), `hudi-edge-web-fixtures-${key.digest('hex').slice(0, 12)}`);
  if (existsSync(root)) return root;
  const work = mkdtempSync(`${root}.tmp-`);
  try {
    for (const [z, d] of zips) {
      mkdirSync(join(work, d), { recursive: true });
      execFileSync('unzip', ['-q', '-o', z, '-d', join(work, d)]);
      rmSync(join(work, d, '__MACOSX'), { recursive: true, force: true });
    }
    writeManifests(work);
    execFileSync('chmod', ['-R', 'a+rX', work]);
  } catch (e) {
    rmSync(work, { recursive: true, force: true });
    throw e;
  }
  try {
    renameSync(work, root);
  } catch {
    rmSync(work, { recursive: true, force: true }); // another process made it first
  }
  return root;
}

/** Where a table's listing manifest lives (the http branch's format, see src/storage/listing.rs). */
export const MANIFEST = '.hoodie/hudi-edge-manifest.json';

/**
 * Writes `.hoodie/hudi-edge-manifest.json` into every table under `root` with the native CLI
 * (`hudi-edge manifest TABLE`). nginx's JSON autoindex leaves out names starting with a dot —
 * Hudi's log files, `.hoodie`, the v6 archive — so Merge-On-Read tables served by nginx are
 * listed from it.
 */
export function writeManifests(root) {
  if (existsSync(join(root, '.hoodie', 'hoodie.properties'))) {
    try {
      execFileSync(requireBinary(cliBin, 'the native CLI (cargo build)', 'HUDI_EDGE_BIN'), ['manifest', root], { stdio: 'pipe' });
    } catch (e) {
      // Lance base files are refused at open (no manifest, nothing reads them).
      if (!/error\[UNSUPPORTED\]: unsupported: base file format LANCE/.test(e.stderr)) throw new Error(`hudi-edge manifest ${root}: ${e.stderr || e.message}`);
    }
    return;
  }
  for (const e of readdirSync(root, { withFileTypes: true })) if (e.isDirectory()) writeManifests(join(root, e.name));
}

/** The expected results of a fixture table (tests/data/fixtures/expected/NAME.json). */
export async function expected(name) {
  return JSON.parse(readFileSync(join(fixtures, 'expected', `${name}.json`), 'utf8'));
}

export async function freePort() {
  return new Promise((resolve, reject) => {
    const s = netServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function waitFor(url, ms = 10000) {
  const until = Date.now() + ms;
  for (;;) {
    try {
      const r = await fetch(url);
      await r.arrayBuffer();
      return;
    } catch (e) {
      if (Date.now() > until) throw new Error(`${url} did not come up: ${e.message}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/**
 * Starts nginx on 127.0.0.1 serving `mounts` ({ '/tables/': dir, '/': dir, '=/a/file': file })
 * with JSON directory listings, byte ranges and CORS. Also:
 *   /denied/...   403 for everything
 *   /slow/X       the /tables/ tree at `slowRate` bytes/s (abort and progress tests)
 *   /partial/X    the /tables/ tree, but data files (.parquet, .log.N) answer 403
 * Returns { url, port, dir, stop() }.
 */
export async function startNginx({ mounts, slowRate = '64k', port: wanted } = {}) {
  const dir = tempDir('nginx');
  const port = wanted ?? (await freePort());
  const tables = mounts?.['/tables/'];
  const listing = 'autoindex on; autoindex_format json;';
  const locations = Object.entries(mounts ?? {})
    .sort((a, b) => b[0].length - a[0].length)
    .map(([prefix, path]) =>
      prefix === '/'
        ? `location / { root ${path}; try_files $uri $uri/index.html =404; }`
        : prefix.startsWith('=')
          ? `location = ${prefix.slice(1)} { alias ${path}; }`
          : `location ${prefix} { alias ${path.replace(/\/?$/, '/')}; ${listing} }`,
    );
  if (tables) {
    locations.push(`location /slow/ { alias ${tables.replace(/\/?$/, '/')}; ${listing} limit_rate ${slowRate}; }`);
    locations.push(`location ~ ^/partial/.*(\\.parquet|\\.log\\.[0-9][^/]*)$ { return 403; }`);
    locations.push(`location /partial/ { alias ${tables.replace(/\/?$/, '/')}; ${listing} }`);
  }
  locations.push('location /denied/ { return 403; }');
  const conf = `
${process.getuid?.() === 0 ? 'user root;' : ''}
worker_processes 1;
error_log ${dir}/error.log warn;
pid ${dir}/nginx.pid;
events { worker_connections 256; }
http {
  access_log ${dir}/access.log;
  client_body_temp_path ${dir}/body; proxy_temp_path ${dir}/proxy; fastcgi_temp_path ${dir}/fcgi;
  uwsgi_temp_path ${dir}/uwsgi; scgi_temp_path ${dir}/scgi;
  types { text/html html; application/javascript js mjs; text/css css; application/wasm wasm;
          application/json json; image/svg+xml svg; image/png png; application/zip zip; }
  default_type application/octet-stream;
  sendfile on; keepalive_timeout 30;
  gzip on; gzip_types application/javascript application/wasm text/css application/json;
  server {
    listen 127.0.0.1:${port};
    add_header Access-Control-Allow-Origin * always;
    add_header Access-Control-Expose-Headers "Content-Length, Content-Range, ETag, Last-Modified" always;
    add_header Access-Control-Allow-Headers "Range, Authorization, Content-Type, X-Test" always;
    add_header Access-Control-Allow-Methods "GET, HEAD, OPTIONS" always;
    if ($request_method = OPTIONS) { return 204; }
    ${locations.join('\n    ')}
  }
}`;
  writeFileSync(join(dir, 'nginx.conf'), conf);
  const proc = spawn(requireBinary(NGINX, 'nginx', 'HUDI_EDGE_NGINX'), ['-p', dir, '-c', join(dir, 'nginx.conf'), '-g', 'daemon off;'], { stdio: ['ignore', 'inherit', 'inherit'] });
  const exited = new Promise((r) => proc.on('exit', r));
  const url = `http://127.0.0.1:${port}`;
  await waitFor(`${url}/denied/`);
  return {
    url,
    port,
    dir,
    /** Requests nginx has logged so far (lines of its access log). */
    accessLog: () => {
      try {
        return execFileSync('cat', [join(dir, 'access.log')], { encoding: 'utf8' }).split('\n').filter(Boolean);
      } catch {
        return [];
      }
    },
    async stop() {
      proc.kill('SIGQUIT');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const CONTENT_TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.css': 'text/css', '.json': 'application/json' };

/** A proxy on 127.0.0.1 that adds `delayMs` before forwarding each request to `target`.
 *  `serve: { prefix, dir }` answers paths under `prefix` from `dir` instead (a page and the
 *  storage on one origin: no CORS in the way). */
export async function startLatencyProxy(target, delayMs, { serve } = {}) {
  const t = new URL(target);
  // Requests forwarded, and the time the target took to answer them (summed).
  const stats = { requests: 0, upstreamMs: 0 };
  const server = createServer((req, res) => {
    if (serve && req.url.startsWith(serve.prefix)) {
      const rel = decodeURIComponent(req.url.slice(serve.prefix.length).split('?')[0]) || 'index.html';
      const file = join(serve.dir, rel);
      if (!file.startsWith(serve.dir) || !existsSync(file) || statSync(file).isDirectory()) return res.writeHead(404).end();
      res.writeHead(200, { 'content-type': CONTENT_TYPES[file.slice(file.lastIndexOf('.'))] ?? 'application/octet-stream' });
      return res.end(readFileSync(file));
    }
    stats.requests += 1;
    setTimeout(() => {
      const sent = performance.now();
      const up = httpRequest(
        { host: t.hostname, port: t.port, path: req.url, method: req.method, headers: req.headers },
        (r) => {
          res.writeHead(r.statusCode ?? 502, r.headers);
          r.on('end', () => (stats.upstreamMs += performance.now() - sent));
          r.pipe(res);
        },
      );
      up.on('error', () => res.destroy());
      req.pipe(up);
    }, delayMs);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address();
  return { url: `http://127.0.0.1:${port}`, stats, stop: () => new Promise((r) => server.close(r)) };
}

/** moto's S3 server from the project venv (.ci/setup installs it). Returns { url, stop() }. */
export async function startMoto() {
  const python = requireBinary(join(cache, 'venv', 'bin', 'python'), "the project venv (moto's S3 server)", 'HUDI_EDGE_CACHE');
  const port = await freePort();
  const proc = spawn(python, ['-m', 'moto.server', '-H', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
  const exited = new Promise((r) => proc.on('exit', r));
  const url = `http://127.0.0.1:${port}`;
  await waitFor(`${url}/moto-api/`, 30000);
  return {
    url,
    python,
    async stop() {
      proc.kill('SIGTERM');
      await exited;
    },
  };
}

/** Rows in the fixtures' canonical order: by record key, partition path, row JSON. */
export function canonical(rows, keyFields = []) {
  const t = (v) => (v === null || v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v));
  const keyOf = (r) =>
    typeof r._hoodie_record_key === 'string'
      ? r._hoodie_record_key
      : keyFields.length === 1
        ? t(r[keyFields[0]])
        : keyFields.map((f) => `${f}:${t(r[f])}`).join(',');
  return rows
    .map((r) => [keyOf(r), r._hoodie_partition_path ?? '', JSON.stringify(r), r])
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : a[2] < b[2] ? -1 : a[2] > b[2] ? 1 : 0))
    .map((x) => x[3]);
}
