// What every JS test harness (tests/http, tests/web, the package tests) shares: where the
// server and browser binaries are, a clear error when one is missing, temporary directories
// removed when the test process ends (a table tree is ~115 MB), and server processes that
// die with it.
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const targetDir = process.env.CARGO_TARGET_DIR ?? join(repo, 'target');
/** The native CLI (`cargo build`): it writes the listing manifests every served table gets. */
export const cliBin = process.env.HUDI_EDGE_BIN ?? join(targetDir, 'debug', 'hudi-edge');
export const NGINX = process.env.HUDI_EDGE_NGINX ?? '/usr/sbin/nginx';
export const CHROMIUM = process.env.HUDI_EDGE_CHROMIUM ?? '/usr/bin/chromium';
/** Where .ci/setup puts the project venv (moto, PyPI hudi) and other downloads. */
export const cache = process.env.HUDI_EDGE_CACHE ?? join(homedir(), '.cache', 'hudi-edge');

/** `path`, or an error naming what is missing, where it was looked for and how to get it. */
export function requireBinary(path, what, env) {
  if (!existsSync(path)) throw new Error(`${what} not found at ${path}: run .ci/setup${env ? ` or set ${env}` : ''}`);
  return path;
}

const temporary = new Set();
// Exit handlers run even on Ctrl-C / SIGTERM (then as an exit with status 1).
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => process.exit(1));
let removing = false;

/** A fresh directory under the system temp dir named `hudi-edge-<what>-…`, removed at exit
 *  (or earlier by `removeTemp`). */
export function tempDir(what) {
  const dir = mkdtempSync(join(tmpdir(), `hudi-edge-${what}-`));
  temporary.add(dir);
  // Registered at the first use: after the harness's own exit handler that kills servers.
  if (!removing) {
    removing = true;
    process.on('exit', () => {
      for (const d of temporary) rmSync(d, { recursive: true, force: true });
    });
  }
  return dir;
}

export function removeTemp(dir) {
  temporary.delete(dir);
  rmSync(dir, { recursive: true, force: true });
}

const children = new Set();
process.on('exit', () => {
  for (const c of children) {
    try {
      c.kill('SIGKILL');
    } catch {}
  }
});

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

/** Spawns a server; it is killed when stopped (`stopSignal`, then SIGKILL after 3 s), when the
 *  test process exits, and after `maxMs` whatever happens (`null`: lives as long as the test
 *  process). */
export function launch(cmd, args, { cwd, env, maxMs = 20 * 60_000, name = cmd, stopSignal = 'SIGTERM' } = {}) {
  // Output goes to a file, not a pipe: a synchronous step in this process (loading tables)
  // must not leave a chatty server blocked on a full pipe.
  const logDir = tempDir('log');
  const logFile = join(logDir, 'server.log');
  const fd = openSync(logFile, 'w');
  const child = spawn(cmd, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  children.add(child);
  const timer = maxMs === null ? undefined : setTimeout(() => child.kill('SIGKILL'), maxMs);
  timer?.unref();
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.once('exit', () => {
    clearTimeout(timer);
    children.delete(child);
  });
  return {
    child,
    name,
    log: () => {
      try {
        return readFileSync(logFile, 'utf8').slice(-20_000);
      } catch {
        return '';
      }
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill(stopSignal);
        const t = setTimeout(() => child.kill('SIGKILL'), 3000);
        await exited;
        clearTimeout(t);
      }
      removeTemp(logDir);
    },
  };
}

/** Waits until `url` answers (any status), at most `ms`; fails early, with the server's log,
 *  when the server exits. */
export async function waitFor(url, server, ms = 30_000) {
  const end = Date.now() + ms;
  let last;
  while (Date.now() < end) {
    if (server && server.child.exitCode !== null) break;
    try {
      const r = await fetch(url, { signal: AbortSignal.timeout(2000) });
      await r.arrayBuffer();
      return;
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${server?.name ?? url} did not come up at ${url}: ${last?.message ?? 'exited'}\n${server?.log() ?? ''}`);
}

/** JSON with keys sorted at every depth, so rows compare as text whoever printed them. */
export function sortedJson(v) {
  const sort = (x) =>
    Array.isArray(x) ? x.map(sort) : x && typeof x === 'object' ? Object.fromEntries(Object.keys(x).sort().map((k) => [k, sort(x[k])])) : x;
  return JSON.stringify(sort(v), (_, x) => (typeof x === 'bigint' ? Number(x) : x));
}
export const lines = (rows) => rows.map(sortedJson).sort();
