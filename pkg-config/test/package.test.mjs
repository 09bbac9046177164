// The tarball as users get it: what it holds (LICENSE, NOTICE; no internal files), `npm pack`
// guarded as `npm publish` is, installed into a fresh project with apache-arrow as a peer: an
// ESM and a CommonJS consumer read a local table, the app's own apache-arrow (17 and 21) is
// the one results are made of, and `npx hudi-edge manifest` works without Rust.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { unzippedFixtures } from '../../tests/web/lib/servers.mjs';
import { cliBin, tempDir } from '../../tests/lib/harness.mjs';
import { V9_MOR } from './helpers.mjs';

const pkgDir = join(import.meta.dirname, '..');
const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));
const scratch = tempDir('pkg-tarball');
let tarball;
let files;
const table = join(scratch, 'trips');

before(() => {
  const out = execFileSync('npm', ['pack', '--json', '--pack-destination', scratch], { cwd: pkgDir, encoding: 'utf8', env: { ...process.env, HUDI_EDGE_PACK_UNOPTIMIZED: '1' } });
  tarball = join(scratch, JSON.parse(out)[0].filename);
  files = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).trim().split('\n');
  cpSync(join(unzippedFixtures(), 'tables', V9_MOR), table, { recursive: true });
});
after(() => rmSync(scratch, { recursive: true, force: true }));

function project(deps = []) {
  const dir = tempDir('pkg-consumer');
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true }));
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error', tarball, ...deps], { cwd: dir, stdio: 'pipe' });
  return dir;
}

test('the tarball: LICENSE and NOTICE, the bin, no internal files, no invented home', () => {
  for (const f of ['LICENSE', 'NOTICE', 'README.md', 'package.json', 'dist/node.js', 'dist/cli.js', 'dist/fs-storage.js', 'dist/fs-storage.d.ts', 'dist/wasm/hudi_edge_bg.wasm']) {
    assert.ok(files.includes(`package/${f}`), f);
  }
  assert.match(readFileSync(join(pkgDir, 'LICENSE'), 'utf8'), /Apache License\s+Version 2\.0, January 2004/);
  const internal = files.filter((f) => /wire-check|\/wasm\/.*\.d\.ts$|\.wasm-opt$|\/src\/|\/test\//.test(f));
  assert.deepEqual(internal, []);
  // Every .d.ts shipped resolves its imports inside the tarball.
  for (const f of files.filter((f) => f.endsWith('.d.ts'))) {
    const text = execFileSync('tar', ['-xOzf', tarball, f], { encoding: 'utf8' });
    for (const [, spec] of text.matchAll(/from '(\.[^']+)'/g)) {
      const target = join(f, '..', spec).replace(/\.js$/, '.d.ts');
      assert.ok(files.includes(target), `${f} imports ${spec}`);
    }
  }
  for (const k of ['repository', 'homepage', 'bugs']) assert.equal(pkg[k], undefined, k);
  assert.equal(pkg.dependencies?.['apache-arrow'], undefined);
  assert.ok(pkg.peerDependencies['apache-arrow'] && pkg.devDependencies['apache-arrow']);
});

test('npm pack is guarded as npm publish: no tarball of a module wasm-opt did not shrink', { skip: existsSync(join(pkgDir, 'dist/wasm/.wasm-opt')) && 'dist/ is a publish build' }, () => {
  const r = spawnSync('npm', ['pack', '--pack-destination', scratch], { cwd: pkgDir, encoding: 'utf8', env: { ...process.env, HUDI_EDGE_PACK_UNOPTIMIZED: '' } });
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /build:publish/);
});

const read = (dir) => `const t = await HudiTable.open(${JSON.stringify(table)});
  const rows = await t.rows();
  const arrow = await t.read();
  console.log(JSON.stringify({ rows: rows.length, sameArrow: arrow instanceof Arrow.Table, arrow: Arrow.util ? 'ok' : '' }));`;

test('consumers: ESM import and CommonJS require() read a local table; results are the app\'s apache-arrow (17 and 21)', () => {
  for (const arrow of ['apache-arrow@21.2.0', 'apache-arrow@17.0.0']) {
    const dir = project([arrow]);
    writeFileSync(join(dir, 'esm.mjs'), `import { HudiTable } from 'hudi-edge';\nimport * as Arrow from 'apache-arrow';\n${read()}`);
    writeFileSync(join(dir, 'cjs.cjs'), `const { HudiTable } = require('hudi-edge');\nconst Arrow = require('apache-arrow');\n(async () => { ${read()} })();`);
    for (const f of ['esm.mjs', 'cjs.cjs']) {
      const out = JSON.parse(execFileSync(process.execPath, [f], { cwd: dir, encoding: 'utf8' }));
      assert.equal(out.rows, 12, `${arrow} ${f}`);
      // apache-arrow before 21 ships separate CommonJS and ESM builds: require() in the app
      // loads the other one (arrow's own dual-package split; the README says so).
      const dual = arrow.endsWith('@17.0.0') && f === 'cjs.cjs';
      assert.equal(out.sameArrow, !dual, `${arrow} ${f}: one copy of apache-arrow`);
    }
    assert.deepEqual(readdir(join(dir, 'node_modules')).filter((d) => d === 'apache-arrow'), ['apache-arrow']);
    assert.ok(!existsSync(join(dir, 'node_modules', 'hudi-edge', 'node_modules', 'apache-arrow')), 'no second copy under the package');
    rmSync(dir, { recursive: true, force: true });
  }
});

test('npx hudi-edge manifest DIR: the manifest in JS, the same files as the native CLI lists', () => {
  const dir = project();
  const r = spawnSync('npx', ['--no-install', 'hudi-edge', 'manifest', table], { cwd: dir, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /hudi-edge manifest: \d+ files, latest instant \d{17}/);
  const m = JSON.parse(readFileSync(join(table, '.hoodie', 'hudi-edge-manifest.json'), 'utf8'));
  assert.equal(m.format, 'hudi-edge-manifest');
  assert.equal(m.version, 1);
  assert.ok(m.dirs['.hoodie/timeline'].length > 0);
  assert.ok(Object.keys(m.dirs).every((d) => !d.startsWith('.hoodie/.temp')));
  const stdout = spawnSync('npx', ['--no-install', 'hudi-edge', 'manifest', table, '--output', '-'], { cwd: dir, encoding: 'utf8' });
  const js = JSON.parse(stdout.stdout);
  const native = JSON.parse(execFileSync(cliBin, ['manifest', table, '--output', '-'], { encoding: 'utf8' }));
  assert.deepEqual(js.dirs, native.dirs, 'the files and sizes the native CLI lists');
  assert.deepEqual([js.table, js.tableVersion, js.latestInstant], [native.table, native.tableVersion, native.latestInstant]);
  const bad = spawnSync('npx', ['--no-install', 'hudi-edge', 'manifest', join(scratch, 'none')], { cwd: dir, encoding: 'utf8' });
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /^error\[NOT_FOUND\]/m);
  rmSync(dir, { recursive: true, force: true });
});

function readdir(d) {
  return execFileSync('ls', ['-A', d], { encoding: 'utf8' }).trim().split('\n');
}
