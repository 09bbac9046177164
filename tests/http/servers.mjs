// Real servers for the HTTP tests, each started here on 127.0.0.1 with a port of its own,
// bounded in time, and stopped when the test process ends: nginx (Debian's, private config),
// moto's S3 server (from the project venv), workerd (npm), and the fixture tables unzipped
// into a temp dir. Nothing here listens on anything but loopback.
import { spawn, execFileSync, execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, mkdirSync, readdirSync, statSync, writeFileSync, cpSync, renameSync, rmSync, existsSync, openSync, closeSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir } from 'node:os';
import { join, dirname, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NGINX, cliBin, requireBinary, targetDir, tempDir } from '../lib/harness.mjs';

export { cliBin, targetDir };

export const here = dirname(fileURLToPath(import.meta.url));
export const repo = join(here, '..', '..');
export const fixtures = process.env.HUDI_EDGE_FIXTURES ?? join(repo, 'tests', 'data', 'fixtures');
export const cache = process.env.HUDI_EDGE_CACHE ?? join(homedir(), '.cache', 'hudi-edge');
export const wasmNode = process.env.HUDI_EDGE_WASM_NODE ?? join(targetDir, 'wasm-node');
export const wasmWeb = process.env.HUDI_EDGE_WASM_WEB ?? join(targetDir, 'wasm-web');

const execFileAsync = promisify(execFile);
const children = new Set();
function cleanup() {
  for (const c of children) {
    try {
      c.kill('SIGKILL');
    } catch {}
  }
}
process.on('exit', cleanup);

export async function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/// Spawns a server; it is killed when stopped, when the test process exits, and after
/// `maxMs` whatever happens.
export function launch(cmd, args, { cwd, env, maxMs = 20 * 60_000, name = cmd } = {}) {
  // Output goes to a file, not a pipe: a synchronous step in this process (loading tables)
  // must not leave a chatty server blocked on a full pipe.
  const logFile = join(tempDir('log'), 'server.log');
  const fd = openSync(logFile, 'w');
  const child = spawn(cmd, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  children.add(child);
  const timer = setTimeout(() => child.kill('SIGKILL'), maxMs);
  timer.unref();
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.once('exit', () => {
    clearTimeout(timer);
    children.delete(child);
  });
  return {
    child,
    log: () => {
      try {
        return readFileSync(logFile, 'utf8').slice(-20_000);
      } catch {
        return '';
      }
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const t = setTimeout(() => child.kill('SIGKILL'), 3000);
        await exited;
        clearTimeout(t);
      }
    },
    name,
  };
}

/// Waits until `url` answers (any status), at most `ms`.
export async function waitFor(url, server, ms = 30_000) {
  const end = Date.now() + ms;
  let last;
  while (Date.now() < end) {
    if (server?.child.exitCode !== null && server?.child.exitCode !== undefined) break;
    try {
      await fetch(url, { signal: AbortSignal.timeout(2000) });
      return;
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${server?.name ?? url} did not come up at ${url}: ${last?.message ?? ''}\n${server?.log() ?? ''}`);
}

// ---------------------------------------------------------------------------------------
// Fixture tables

export function fixtureNames() {
  const walk = (dir) =>
    readdirSync(dir).flatMap((n) => {
      const p = join(dir, n);
      return statSync(p).isDirectory() ? walk(p) : n.endsWith('.zip') ? [p] : [];
    });
  const root = join(fixtures, 'tables');
  return walk(root)
    .map((z) => relative(root, z).replace(/\.zip$/, ''))
    .filter((n) => !n.includes('lance')) // Lance base files are refused at open (see tests/js)
    .sort();
}

export const expected = async (name) => (await import('node:fs')).readFileSync(join(fixtures, 'expected', `${name}.json`), 'utf8');

let unzipped;
/// Every fixture table unzipped under `<dir>/<name>/` (once per process), with a manifest
/// written by the native CLI (`hudi-edge manifest`) when `withManifest`.
export function tablesDir() {
  if (unzipped) return unzipped;
  const dir = tempDir('http');
  for (const name of fixtureNames()) {
    const scratch = mkdtempSync(join(dir, '.unzip-'));
    execFileSync('unzip', ['-q', join(fixtures, 'tables', `${name}.zip`), '-d', scratch]);
    const top = readdirSync(scratch).find((n) => n !== '__MACOSX');
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    renameSync(join(scratch, top), join(dir, name));
    rmSync(scratch, { recursive: true, force: true });
  }
  unzipped = dir;
  return dir;
}

/// Writes `.hoodie/hudi-edge-manifest.json` into each table with the native CLI.
export function writeManifests(dir) {
  requireBinary(cliBin, 'the native CLI (cargo build)', 'HUDI_EDGE_BIN');
  for (const name of fixtureNames()) execFileSync(cliBin, ['manifest', join(dir, name)], { stdio: 'pipe' });
}

// ---------------------------------------------------------------------------------------
// nginx

/// nginx serving `root` with Range support and JSON autoindex (which hides dot-files).
export async function startNginx(root) {
  const prefix = tempDir('nginx');
  const port = await freePort();
  for (const d of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(join(prefix, d));
  const asRoot = process.getuid?.() === 0;
  const conf = `
${asRoot ? 'user root;' : ''}
worker_processes 1;
daemon off;
pid ${prefix}/nginx.pid;
error_log ${prefix}/error.log warn;
events { worker_connections 256; }
http {
  access_log ${prefix}/access.log;
  client_body_temp_path ${prefix}/body;
  proxy_temp_path ${prefix}/proxy;
  fastcgi_temp_path ${prefix}/fastcgi;
  uwsgi_temp_path ${prefix}/uwsgi;
  scgi_temp_path ${prefix}/scgi;
  types { text/html html; application/javascript js mjs; application/wasm wasm; application/json json; }
  default_type application/octet-stream;
  sendfile on;
  server {
    listen 127.0.0.1:${port};
    root ${root};
    autoindex on;
    autoindex_format json;
    add_header Access-Control-Allow-Origin * always;
    add_header Access-Control-Expose-Headers "Content-Range, Content-Length, ETag, Last-Modified" always;
  }
}
`;
  writeFileSync(join(prefix, 'nginx.conf'), conf);
  const server = launch(requireBinary(NGINX, 'nginx', 'HUDI_EDGE_NGINX'), ['-p', prefix, '-c', join(prefix, 'nginx.conf')], { name: 'nginx' });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(`${url}/`, server);
  return { ...server, url, accessLog: join(prefix, 'access.log') };
}

// ---------------------------------------------------------------------------------------
// moto (S3)

export const S3_CREDS = { accessKeyId: 'AKIDHUDIEDGETEST', secretAccessKey: 'hudi-edge-test-secret-key', region: 'us-east-1' };
export const BUCKET = 'hudi-tables';

/// moto's S3 server, holding every fixture table under `s3://hudi-tables/<name>/`.
export async function startMoto(tables) {
  const port = await freePort();
  const bin = join(cache, 'venv', 'bin', 'moto_server');
  requireBinary(bin, "moto's S3 server", 'HUDI_EDGE_CACHE');
  const server = launch(bin, ['-H', '127.0.0.1', '-p', String(port)], { name: 'moto' });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(`${url}/moto-api/`, server);
  await execFileAsync(join(cache, 'venv', 'bin', 'python'), [join(here, 's3_load.py'), url, BUCKET, tables, ...fixtureNames()], {
    env: { ...process.env, AWS_ACCESS_KEY_ID: S3_CREDS.accessKeyId, AWS_SECRET_ACCESS_KEY: S3_CREDS.secretAccessKey, AWS_DEFAULT_REGION: S3_CREDS.region },
  });
  return { ...server, url };
}

// ---------------------------------------------------------------------------------------
// workerd

/// workerd running `workerModule` (with the wasm-web build and the fixture checks as
/// modules); loopback reachable through the `internet` service.
export async function startWorkerd(workerSource, bindings = {}) {
  const dir = tempDir('workerd');
  const port = await freePort();
  cpSync(join(wasmWeb, 'hudi_edge.js'), join(dir, 'hudi_edge.js'));
  cpSync(join(wasmWeb, 'hudi_edge_bg.wasm'), join(dir, 'hudi_edge_bg.wasm'));
  cpSync(join(repo, 'tests', 'js', 'fixture_checks.mjs'), join(dir, 'fixture_checks.mjs'));
  writeFileSync(join(dir, 'worker.mjs'), workerSource);
  const b = Object.entries(bindings)
    .map(([k, v]) => `(name = "${k}", text = ${JSON.stringify(String(v))})`)
    .join(', ');
  writeFileSync(
    join(dir, 'config.capnp'),
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "main", worker = .worker),
    (name = "internet", network = (allow = ["public", "private", "local"])),
  ],
  sockets = [ (name = "http", address = "127.0.0.1:${port}", http = (), service = "main") ],
);
const worker :Workerd.Worker = (
  modules = [
    (name = "worker.mjs", esModule = embed "worker.mjs"),
    (name = "hudi_edge.js", esModule = embed "hudi_edge.js"),
    (name = "fixture_checks.mjs", esModule = embed "fixture_checks.mjs"),
    (name = "hudi_edge_bg.wasm", wasm = embed "hudi_edge_bg.wasm"),
  ],
  compatibilityDate = "2024-09-23",
  bindings = [ ${b} ],
);
`,
  );
  const bin = requireBinary(join(here, 'node_modules', '.bin', 'workerd'), 'workerd (npm ci in tests/http)');
  const server = launch(bin, ['serve', join(dir, 'config.capnp'), '--verbose'], { name: 'workerd' });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(`${url}/health`, server, 60_000);
  return { ...server, url };
}
