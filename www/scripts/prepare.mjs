// Before a build: the hudi-edge package must be built (the viewer loads it from the repo,
// ../pkg-config), and the sample tables (zips of real Hudi tables from tests/data) are copied
// into public/samples/ with an index, so they ship inside dist/ and open with one click.
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const www = join(dirname(fileURLToPath(import.meta.url)), '..');
const repo = join(www, '..');
const pkg = join(repo, 'pkg-config');

if (!existsSync(join(pkg, 'dist', 'browser.js'))) {
  console.log('hudi-edge is not built: building pkg-config/');
  if (!existsSync(join(pkg, 'node_modules'))) execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: pkg, stdio: 'inherit' });
  execFileSync('npm', ['run', 'build'], { cwd: pkg, stdio: 'inherit' });
}

/** The samples, as shown on the start page. `path` is the table's place under tests/data. */
export const SAMPLES = [
  { id: 'txns-cow-v9', title: 'Transactions', kind: 'Copy-On-Write · v9', path: 'fixtures/tables/sample_table/cow/v9_txns_simple_meta', about: '14 instants: inserts, upserts, deletes, an insert overwrite, clustering and index building; a metadata table with column stats, partition stats, a record index and secondary indexes.' },
  { id: 'txns-mor-v9', title: 'Transactions', kind: 'Merge-On-Read · v9', path: 'fixtures/tables/sample_table/mor/avro/v9_txns_simple_meta', about: 'Delta commits with Avro log files, compaction and clustering.' },
  { id: 'trips-mor-v8', title: 'Trips', kind: 'Merge-On-Read · v8', path: 'fixtures/tables/quickstart_trips_table/mor/avro/v8_trips_8i3u1d', about: 'The Hudi quickstart table: 8 inserts, 3 updates, 1 delete in log files.' },
  { id: 'types-cow-v6', title: 'All types', kind: 'Copy-On-Write · v6', path: 'fixtures/tables/sample_table/cow/v6_complexkeygen_hivestyle', about: 'Every Spark type (decimals, dates, timestamps, binary, arrays, maps, structs); complex keys, two-level partitions.' },
  { id: 'archive-mor-v9', title: 'Archived timeline', kind: 'Merge-On-Read · v9', path: 'generated/v9_archive_mor', about: 'A long timeline: older instants live in the LSM timeline history.' },
  { id: 'archive-cow-v6', title: 'Archived timeline', kind: 'Copy-On-Write · v6', path: 'generated/v6_archive_cow', about: 'Older instants in the v6 archived timeline (.commits_.archive files).' },
];

const out = join(www, 'public', 'samples');
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const index = [];
for (const s of SAMPLES) {
  const zip = join(repo, 'tests', 'data', `${s.path}.zip`);
  if (!existsSync(zip)) continue;
  const name = `${s.path.split('/').at(-1)}.zip`;
  copyFileSync(zip, join(out, name));
  index.push({ id: s.id, title: s.title, kind: s.kind, about: s.about, zip: `samples/${name}`, table: s.path.replace(/^fixtures\/tables\//, ''), bytes: statSync(zip).size });
}
writeFileSync(join(out, 'index.json'), JSON.stringify(index, null, 2));
console.log(`samples: ${index.length} tables in public/samples/`);
