// The package as users get it: `npm pack` in pkg-config/, the tarball installed into a clean
// temporary project, then used from a Node 20 ESM script, a Vite app and a webpack 5 app built
// and run in headless Chromium, and a workerd worker — each reading a v6 and a v9 fixture table over a loopback
// nginx and matching the expected rows, and (Node, Vite + Chromium, workerd) the change feed of
// a Copy-On-Write and a Merge-On-Read CDC table, whole and commit by commit, matching the rows
// Apache Hudi Spark returned. The README's examples run here too.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expected, freePort, repo, startNginx, unzippedFixtures } from './lib/servers.mjs';
import { canonical, oracleEncoding } from '../js/fixture_checks.mjs';
import { expectedFeeds, feedsOf, sortedFeed } from '../lib/cdc.mjs';
import { launchChromium } from './lib/browser.mjs';
import { tempDir } from '../lib/harness.mjs';

const here = import.meta.dirname;
const bin = (name) => join(here, 'node_modules', '.bin', name);
const TABLES = ['sample_table/cow/v6_complexkeygen_hivestyle', 'sample_table/cow/v9_txns_simple_meta', 'sample_table/mor/avro/v9_txns_simple_meta'];
const README_URL = 'https://data.example.com/tables/txns';
/** CDC tables: changes read AS_IS from CDC log files (COW), and from log files merged with the
 *  slice before them (MOR); each runtime reads every feed of the expected file. */
const CDC_TABLES = ['cdc_v9_cow_data_before_after', 'cdc_v9_mor_data_before_after'];
/** The `changes` parameter of each runtime's script: the ranges to read, `[[start, end], …]`. */
const cdcRanges = (name) => JSON.stringify(feedsOf(expectedFeeds(name)).map((f) => [f.start, f.end]));
/** A runtime's answer for `cdcRanges(name)` (one `[[op, ts_ms, before, after], …]` per range)
 *  against Spark's feeds; the number of rows compared. */
function assertFeeds(name, got, where) {
  const feeds = feedsOf(expectedFeeds(name));
  assert.equal(got.length, feeds.length, `${where} ${name}: one answer per range`);
  let rows = 0;
  for (const [i, f] of feeds.entries()) {
    assert.deepEqual(sortedFeed(got[i]), f.rows, `${where} ${name} (${f.start}, ${f.end}]`);
    rows += f.rows.length;
  }
  console.log(`${where}: ${name}: ${feeds.length} feeds, ${rows} rows equal Spark's`);
  return rows;
}
/** What each runtime runs for `changes`: every range's feed as `[op, ts_ms, before, after]` rows. */
const FEEDS_JS = `async function feeds(table, ranges) {
  const out = [];
  for (const [start, end] of ranges) {
    const { table: feed } = await table.changesArrow({ start, end });
    out.push([...feed].map((r) => [r.op, r.ts_ms, r.before, r.after]));
  }
  return out;
}
`;

async function assertSnapshot(name, rows) {
  const exp = await expected(name);
  const keys = exp.table.record_key_fields;
  assert.deepEqual(canonical(oracleEncoding(rows, exp.snapshot.schema), keys), canonical(exp.snapshot.rows, keys), name);
}

/** `<!-- tested: KIND -->` followed by a ```js block in the README. */
function readmeExample(kind) {
  const text = readFileSync(join(repo, 'README.md'), 'utf8');
  const m = text.match(new RegExp(`<!-- tested: ${kind} -->\\s*\`\`\`js\\n([\\s\\S]*?)\`\`\``));
  assert.ok(m, `README has a tested ${kind} example`);
  return m[1];
}

let project;
let nginx;
let tarball;

before(async () => {
  const pack = tempDir('pack');
  const out = execFileSync('npm', ['pack', '--json', '--pack-destination', pack], { cwd: join(repo, 'pkg-config'), encoding: 'utf8', env: { ...process.env, HUDI_EDGE_PACK_UNOPTIMIZED: '1' } });
  tarball = join(pack, JSON.parse(out)[0].filename);
  project = tempDir('consumer');
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error', tarball], { cwd: project, stdio: 'inherit' });
  const root = unzippedFixtures();
  mkdirSync(join(project, 'app', 'dist'), { recursive: true });
  mkdirSync(join(project, 'webpack', 'dist'), { recursive: true });
  nginx = await startNginx({ mounts: { '/tables/': join(root, 'tables'), '/cdc/': join(root, 'cdc'), '/app/': join(project, 'app', 'dist'), '/webpack/': join(project, 'webpack', 'dist') } });
});

after(async () => {
  await nginx?.stop();
  if (project) rmSync(project, { recursive: true, force: true });
});

test('the tarball holds the package: ESM, types, the two wasm modules', () => {
  const files = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).split('\n');
  for (const f of ['package/dist/browser.js', 'package/dist/node.js', 'package/dist/workerd.js', 'package/dist/index.d.ts', 'package/dist/wasm/hudi_edge_read_bg.wasm', 'package/dist/wasm/hudi_edge_read.js', 'package/dist/wasm/hudi_edge_bg.wasm', 'package/dist/wasm/hudi_edge.js', 'package/README.md']) {
    assert.ok(files.includes(f), f);
  }
  assert.ok(!files.some((f) => f.includes('/src/') || f.includes('/test/')), 'no sources or tests');
});

describe('Node 20, an ESM script', () => {
  test('reads v6 and v9 tables', async () => {
    writeFileSync(
      join(project, 'read.mjs'),
      `import { HudiTable } from 'hudi-edge';
${FEEDS_JS}
// read.mjs TABLE [--changes RANGES]: the rows, or the change feed of each range.
const table = await HudiTable.open(process.argv[2]);
const answer = process.argv[3] === '--changes' ? await feeds(table, JSON.parse(process.argv[4])) : await table.rows();
process.stdout.write(JSON.stringify(answer));
table.close();
`,
    );
    for (const name of TABLES) {
      const out = execFileSync(process.execPath, ['read.mjs', `${nginx.url}/tables/${name}`], { cwd: project, encoding: 'utf8' });
      await assertSnapshot(name, JSON.parse(out));
    }
  });

  test('reads the change feed of a COW and a MOR CDC table as Spark returns it', () => {
    for (const name of CDC_TABLES) {
      const out = execFileSync(process.execPath, ['read.mjs', `${nginx.url}/cdc/${name}`, '--changes', cdcRanges(name)], { cwd: project, encoding: 'utf8' });
      assert.ok(assertFeeds(name, JSON.parse(out), 'Node') >= 100);
    }
  });

  test('the README example', async () => {
    const exp = await expected(TABLES[1]);
    const code = readmeExample('node').replaceAll(README_URL, `${nginx.url}/tables/${TABLES[1]}`);
    writeFileSync(join(project, 'readme.mjs'), code);
    const out = execFileSync(process.execPath, ['readme.mjs'], { cwd: project, encoding: 'utf8' });
    assert.match(out, /v9_txns_cow_simple_meta: COPY_ON_WRITE v9, 3 partitions/);
    assert.match(out, /20260307162434124 commit INSERT/);
    for (const r of exp.snapshot.rows) assert.equal(out.includes(`'${r.txn_id}'`), r.region === 'us', r.txn_id);
  });
});

describe('a Vite app, built and run in headless Chromium', () => {
  test('reads v6 and v9 tables', async () => {
    const app = join(project, 'app');
    writeFileSync(join(app, 'index.html'), '<!doctype html><meta charset="utf-8"><title>app</title><pre id="out">loading</pre><script type="module" src="./main.js"></script>\n');
    writeFileSync(
      join(app, 'main.js'),
      `import { HudiTable } from 'hudi-edge';
${FEEDS_JS}
const out = document.querySelector('#out');
(async () => {
  // ?table=URL: its rows; &changes=RANGES: the change feed of each range instead.
  const params = new URL(location.href).searchParams;
  const table = await HudiTable.open(params.get('table'));
  const rows = params.has('changes') ? await feeds(table, JSON.parse(params.get('changes'))) : await table.rows();
  out.textContent = JSON.stringify(rows);
  out.dataset.done = 'yes';
})().catch((e) => { out.textContent = 'error ' + e.code + ' ' + e.message; out.dataset.done = 'error'; });
`,
    );
    writeFileSync(join(app, 'vite.config.js'), "export default { base: './', logLevel: 'warn', build: { outDir: 'dist', emptyOutDir: true } };\n");
    execFileSync(bin('vite'), ['build'], { cwd: app, stdio: 'inherit' });
    const assets = readdirSync(join(app, 'dist', 'assets'));
    assert.ok(assets.some((f) => f.endsWith('.wasm')), `the .wasm is emitted as an asset: ${assets}`);

    const browser = await launchChromium();
    try {
      for (const name of TABLES) {
        const page = await browser.newPage();
        await page.goto(`${nginx.url}/app/?table=${encodeURIComponent(`${nginx.url}/tables/${name}`)}`);
        await page.waitForSelector('#out[data-done]', { timeout: 60000 });
        const text = await page.textContent('#out');
        assert.ok(!text.startsWith('error'), text);
        await assertSnapshot(name, JSON.parse(text));
        await page.close();
        browser.assertNoPageErrors();
      }
      for (const name of CDC_TABLES) {
        const page = await browser.newPage();
        const q = new URLSearchParams({ table: `${nginx.url}/cdc/${name}`, changes: cdcRanges(name) });
        await page.goto(`${nginx.url}/app/?${q}`);
        await page.waitForSelector('#out[data-done]', { timeout: 60000 });
        const text = await page.textContent('#out');
        assert.ok(!text.startsWith('error'), text);
        assert.ok(assertFeeds(name, JSON.parse(text), 'Chromium (Vite)') >= 100);
        await page.close();
        browser.assertNoPageErrors();
      }
    } finally {
      await browser.close();
    }
  });
});

describe('a webpack 5 app (browser target, production mode), built and run in headless Chromium', () => {
  test('the bundle builds with no configuration for the .wasm and reads v6 and v9 tables', async () => {
    const dir = join(project, 'webpack');
    writeFileSync(
      join(dir, 'main.js'),
      `import { HudiTable } from 'hudi-edge';
const out = document.querySelector('#out');
(async () => {
  const params = new URL(location.href).searchParams;
  const table = await HudiTable.open(params.get('table'));
  const rows = await table.rows();
  table.close();
  // Error names are literals: minification leaves them readable.
  const missing = params.has('missing') ? await HudiTable.open(params.get('missing')).then(() => 'opened', (e) => ({ name: e.name, code: e.code })) : undefined;
  out.textContent = JSON.stringify({ rows, missing });
  out.dataset.done = 'yes';
})().catch((e) => { out.textContent = 'error ' + e.code + ' ' + e.message; out.dataset.done = 'error'; });
`,
    );
    const { default: webpack } = await import('webpack');
    const started = performance.now();
    const stats = await new Promise((resolve, reject) =>
      webpack(
        {
          mode: 'production',
          target: 'web',
          context: dir,
          entry: './main.js',
          output: { path: join(dir, 'dist'), filename: 'main.js', clean: true },
          performance: { hints: false },
          infrastructureLogging: { level: 'error' },
        },
        (err, st) => (err ? reject(err) : resolve(st)),
      ),
    );
    const info = stats.toJson({ all: false, errors: true, warnings: true, assets: true });
    assert.ok(!stats.hasErrors(), `webpack errors:\n${info.errors.map((e) => e.message).join('\n')}`);
    assert.deepEqual(info.warnings.map((w) => w.message), [], 'webpack warnings');
    const assets = readdirSync(join(dir, 'dist'));
    const wasm = assets.filter((f) => f.endsWith('.wasm'));
    assert.equal(wasm.length, 2, `the two modules emitted as assets: ${assets}`);
    // The smaller is the read module: the only one a page that reads fetches.
    const [readModule] = wasm.sort((a, b) => statSync(join(dir, 'dist', a)).size - statSync(join(dir, 'dist', b)).size);
    console.log(`webpack ${webpack.version}: built in ${Math.round(performance.now() - started)} ms: ${info.assets.map((a) => `${a.name} ${a.size} B`).join(', ')}`);
    writeFileSync(join(dir, 'dist', 'index.html'), '<!doctype html><meta charset="utf-8"><title>webpack app</title><pre id="out">loading</pre><script src="./main.js"></script>\n');

    const browser = await launchChromium();
    try {
      for (const [i, name] of TABLES.entries()) {
        const page = await browser.newPage();
        const q = new URLSearchParams({ table: `${nginx.url}/tables/${name}` });
        // Once: a table that is not there (its 404s show in the console).
        if (i === 0) q.set('missing', `${nginx.url}/tables/no_such_table`);
        await page.goto(`${nginx.url}/webpack/?${q}`);
        await page.waitForSelector('#out[data-done]', { timeout: 60000 });
        const text = await page.textContent('#out');
        assert.ok(!text.startsWith('error'), text);
        const { rows, missing } = JSON.parse(text);
        await assertSnapshot(name, rows);
        if (i === 0) assert.deepEqual(missing, { name: 'NotFoundError', code: 'NOT_FOUND' });
        const fetched = await page.evaluate(() => performance.getEntriesByType('resource').map((e) => e.name.split('/').at(-1)).filter((n) => n.endsWith('.wasm')));
        assert.deepEqual(fetched, [readModule], 'reads fetch the read module alone');
        await page.close();
        browser.assertNoPageErrors();
      }
    } finally {
      await browser.close();
    }
  });
});

describe('a workerd worker', () => {
  let workerd;
  let url;
  let readmeUrl;
  before(async () => {
    const dir = join(project, 'worker');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'rows.js'),
      `import { HudiTable } from 'hudi-edge';
${FEEDS_JS}
export default {
  // ?table=URL: its rows; &changes=RANGES: the change feed of each range instead.
  async fetch(request) {
    let table;
    try {
      const params = new URL(request.url).searchParams;
      table = await HudiTable.open(params.get('table') ?? '');
      if (params.has('changes')) return Response.json(await feeds(table, JSON.parse(params.get('changes'))));
      return Response.json(await table.rows());
    } catch (e) {
      return Response.json({ code: e.code, message: e.message }, { status: 500 });
    } finally {
      table?.close();
    }
  },
};
`,
    );
    writeFileSync(join(dir, 'readme.js'), readmeExample('worker').replaceAll(README_URL, `${nginx.url}/tables/${TABLES[1]}`));
    // What wrangler does: bundle for the workerd condition, keep the .wasm a separate module.
    for (const w of ['rows', 'readme']) {
      execFileSync(
        bin('esbuild'),
        [`${w}.js`, '--bundle', '--format=esm', '--platform=neutral', '--conditions=workerd,worker,browser', '--main-fields=module,main', '--loader:.wasm=copy', '--asset-names=[name]', `--outdir=out/${w}`, '--log-level=warning'],
        { cwd: dir, stdio: 'inherit' },
      );
    }
    const port = await freePort();
    const readmePort = await freePort();
    const module = (w) => `(name = "${w}.js", esModule = embed "out/${w}/${w}.js"), (name = "hudi_edge_bg.wasm", wasm = embed "out/${w}/hudi_edge_bg.wasm")`;
    writeFileSync(
      join(dir, 'config.capnp'),
      `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "rows", worker = (modules = [${module('rows')}], compatibilityDate = "2025-06-01")),
    (name = "readme", worker = (modules = [${module('readme')}], compatibilityDate = "2025-06-01")),
    # Loopback is refused unless the "internet" service allows it.
    (name = "internet", network = (allow = ["public", "private", "local"])),
  ],
  sockets = [
    (name = "rows", address = "127.0.0.1:${port}", http = (), service = "rows"),
    (name = "readme", address = "127.0.0.1:${readmePort}", http = (), service = "readme"),
  ],
);
`,
    );
    workerd = spawn(bin('workerd'), ['serve', 'config.capnp'], { cwd: dir, stdio: ['ignore', 'inherit', 'inherit'] });
    let exited = false;
    workerd.on('exit', () => (exited = true));
    url = `http://127.0.0.1:${port}`;
    readmeUrl = `http://127.0.0.1:${readmePort}`;
    for (let i = 0; ; i++) {
      if (exited) throw new Error('workerd exited');
      try {
        await fetch(`${url}/`).then((r) => r.arrayBuffer());
        break;
      } catch (e) {
        if (i > 200) throw e;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  });
  after(async () => {
    if (workerd && workerd.exitCode === null) {
      const exited = new Promise((r) => workerd.on('exit', r));
      workerd.kill('SIGTERM');
      await exited;
    }
  });

  test('reads v6 and v9 tables', async () => {
    for (const name of TABLES) {
      const r = await fetch(`${url}/?table=${encodeURIComponent(`${nginx.url}/tables/${name}`)}`);
      const body = await r.json();
      assert.equal(r.status, 200, JSON.stringify(body));
      await assertSnapshot(name, body);
    }
  });

  test('reads the change feed of a COW and a MOR CDC table as Spark returns it', async () => {
    for (const name of CDC_TABLES) {
      const q = new URLSearchParams({ table: `${nginx.url}/cdc/${name}`, changes: cdcRanges(name) });
      const r = await fetch(`${url}/?${q}`);
      const body = await r.json();
      assert.equal(r.status, 200, JSON.stringify(body));
      assert.ok(assertFeeds(name, body, 'workerd') >= 100);
    }
  });

  test('the README example', async () => {
    const r = await fetch(`${readmeUrl}/?region=eu`);
    const rows = await r.json();
    const exp = await expected(TABLES[1]);
    const want = exp.snapshot.rows.filter((x) => x.region === 'eu').map((x) => ({ txn_id: x.txn_id, amount: x.amount }));
    assert.deepEqual(canonical(rows, ['txn_id']), canonical(want, ['txn_id']));
  });
});
