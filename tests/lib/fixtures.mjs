// The fixture tables for every JS test: which there are, the expected results, one shared
// unzipped tree with CLI-written manifests, and private copies for tests that change a table.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { cliBin, repo, requireBinary, tempDir } from './harness.mjs';

export const fixtures = process.env.HUDI_EDGE_FIXTURES ?? join(repo, 'tests', 'data', 'fixtures');
export const generated = join(repo, 'tests', 'data', 'generated');
/** Spark-written change-feed tables (tests/data/cdc, with Spark's feeds beside them). */
export const cdc = join(repo, 'tests', 'data', 'cdc');

function zipsUnder(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    return e.isDirectory() ? zipsUnder(p) : e.name.endsWith('.zip') ? [p] : [];
  });
}

/** The fixture tables (`sample_table/cow/v9_txns_simple_meta`, …), sorted; Lance tables left
 *  out unless asked for (their base files are refused at open). */
export function fixtureNames({ lance = false } = {}) {
  const root = join(fixtures, 'tables');
  return zipsUnder(root)
    .map((z) => relative(root, z).replace(/\.zip$/, ''))
    .filter((n) => lance || !n.includes('lance'))
    .sort();
}

/** The expected results of a fixture table (tests/data/fixtures/expected/NAME.json). */
export async function expected(name) {
  return JSON.parse(readFileSync(join(fixtures, 'expected', `${name}.json`), 'utf8'));
}

/** Unzips a table zip (one top folder) into `dir`; the table's root. */
function unzipTable(zip, dir) {
  execFileSync('unzip', ['-q', '-o', zip, '-d', dir]);
  rmSync(join(dir, '__MACOSX'), { recursive: true, force: true });
  return join(dir, readdirSync(dir).find((n) => n !== '__MACOSX'));
}

/** A private copy of a Spark variant table (tests/data/spark_variants/NAME.zip): its root. */
export function variantCopy(name, what = 'table') {
  return unzipTable(join(repo, 'tests', 'data', 'spark_variants', `${name}.zip`), tempDir(what));
}

/** A private copy of a fixture table (removed at exit): its root. */
export function tableCopy(name, what = 'table') {
  return unzipTable(join(fixtures, 'tables', `${name}.zip`), tempDir(what));
}

/**
 * Every fixture table unzipped once into a shared directory (keyed by the zips' contents;
 * made atomically, kept for the next test process), each with a manifest the native CLI wrote:
 * `<root>/tables/sample_table/cow/v9_txns_simple_meta/`, `<root>/generated/v9_archive_mor/`,
 * `<root>/cdc/cdc_v9_cow_data_before_after/`.
 * Read-only for tests: one that changes a table takes a `tableCopy`.
 */
export function unzippedFixtures() {
  const zips = [
    ...fixtureNames({ lance: true }).map((n) => [join(fixtures, 'tables', `${n}.zip`), join('tables', dirname(n))]),
    ...zipsUnder(generated).map((z) => [z, 'generated']),
    ...zipsUnder(cdc).map((z) => [z, 'cdc']),
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

/** Where a table's listing manifest lives (the http branch's format, see src/storage/listing/manifest.rs). */
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
