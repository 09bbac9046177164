// What every JS test harness (tests/http, tests/web, the package tests) shares: where the
// server and browser binaries are, a clear error when one is missing, and temporary
// directories removed when the test process ends (a table tree is ~115 MB).
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const targetDir = process.env.CARGO_TARGET_DIR ?? join(repo, 'target');
/** The native CLI (`cargo build`): it writes the listing manifests every served table gets. */
export const cliBin = process.env.HUDI_EDGE_BIN ?? join(targetDir, 'debug', 'hudi-edge');
export const NGINX = process.env.HUDI_EDGE_NGINX ?? '/usr/sbin/nginx';
export const CHROMIUM = process.env.HUDI_EDGE_CHROMIUM ?? '/usr/bin/chromium';

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
