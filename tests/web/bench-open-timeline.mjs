// Benchmark (not a test): time from opening a v9 table to its timeline drawn, with 20 ms added
// to every request (a latency proxy in front of a loopback nginx). Measured in the viewer in
// headless Chromium — cold (a fresh page: the wasm module is fetched and compiled during the
// open) and warm (the module loaded, the table opened again) — and with the package in Node.
//
//   node tests/web/bench-open-timeline.mjs [--runs N] [--delay MS] [TABLE ...]
import { join } from 'node:path';
import { repo, startLatencyProxy, startNginx, unzippedFixtures } from './lib/servers.mjs';
import { launchChromium } from './lib/browser.mjs';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args.splice(i, 2)[1]) : dflt;
};
const runs = opt('runs', 7);
const delay = opt('delay', 20);
const tables = args.length ? args : ['sample_table/cow/v9_txns_simple_meta', 'sample_table/mor/avro/v9_txns_simple_meta'];

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (xs) => `median ${median(xs).toFixed(0)} ms (min ${Math.min(...xs).toFixed(0)}, max ${Math.max(...xs).toFixed(0)})`;

const root = unzippedFixtures();
const nginx = await startNginx({ mounts: { '/tables/': join(root, 'tables'), '/': join(repo, 'www', 'dist') } });
const proxy = await startLatencyProxy(nginx.url, delay);
const { HudiTable } = await import(join(repo, 'pkg-config', 'dist', 'node.js'));
const browser = await launchChromium();
console.log(`open → timeline drawn, ${delay} ms added per request, ${runs} runs each (viewer: Debian Chromium headless)`);
try {
  for (const name of tables) {
    const url = `${proxy.url}/tables/${name}`;
    const cold = [];
    const warm = [];
    let requests = 0;
    for (let r = 0; r < runs; r++) {
      const page = await browser.newPage();
      await page.goto(`${nginx.url}/`);
      await page.waitForSelector('[data-testid=sample]');
      for (const bucket of [cold, warm]) {
        await page.fill('[data-testid=table-url]', url);
        await page.click('[data-testid=open-table]');
        await page.waitForSelector('body[data-timeline-drawn=yes]', { timeout: 60000 });
        bucket.push(await page.evaluate(() => window.hudiViewer.timings.timelineDrawn));
        requests = await page.evaluate(() => window.hudiViewer.timings.requestsAtTimeline);
        await page.waitForSelector('body[data-ready=yes]', { timeout: 60000 });
      }
      await page.close();
    }
    const node = [];
    let io;
    for (let r = 0; r < runs; r++) {
      const t0 = performance.now();
      const t = await HudiTable.open(url);
      await t.timeline({ operations: false });
      node.push(performance.now() - t0);
      io = t.io();
      t.close();
    }
    console.log(`\n${name}`);
    console.log(`  viewer, cold page (wasm fetched + compiled): ${fmt(cold)}`);
    console.log(`  viewer, warm (table opened again):           ${fmt(warm)}   [${requests} requests]`);
    console.log(`  Node, HudiTable.open + timeline():           ${fmt(node)}   [${io.requests} requests, ${io.roundTrips} round trips]`);
  }
} finally {
  await browser.close();
  await proxy.stop();
  await nginx.stop();
}
