// `.ci/demo`: the viewer (www/dist) and the sample tables, unzipped with their listing
// manifests, on one loopback nginx; the samples open by URL (real ranged reads over HTTP).
// Runs until Ctrl-C.   node tests/web/demo-server.mjs [--port N]
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, repo, startNginx, unzippedFixtures } from './lib/servers.mjs';
import { tempDir } from '../lib/harness.mjs';

const i = process.argv.indexOf('--port');
const asked = i > 0 ? Number(process.argv[i + 1]) : Number(process.env.HUDI_EDGE_DEMO_PORT ?? 8080);
const dist = join(repo, 'www', 'dist');
if (!existsSync(join(dist, 'index.html'))) {
  console.error('www/dist is missing: cd www && npm ci && npm run build');
  process.exit(1);
}
const root = unzippedFixtures();
const work = tempDir('demo');
const samples = JSON.parse(readFileSync(join(dist, 'samples', 'index.json'), 'utf8')).map((s) => ({
  ...s,
  url: s.table.startsWith('generated/') ? s.table : `tables/${s.table}`,
}));
writeFileSync(join(work, 'index.json'), JSON.stringify(samples, null, 2));

const portFree = async (p) => {
  try {
    await fetch(`http://127.0.0.1:${p}/`, { signal: AbortSignal.timeout(500) });
    return false;
  } catch {
    return true;
  }
};
const port = (await portFree(asked)) ? asked : await freePort();
const nginx = await startNginx({
  port,
  mounts: { '/': dist, '/tables/': join(root, 'tables'), '/generated/': join(root, 'generated'), '=/samples/index.json': join(work, 'index.json') },
});
console.log(`\nhudi-edge viewer: ${nginx.url}/`);
console.log(`  sample tables:  ${nginx.url}/tables/sample_table/…  (also one click on the start page)`);
console.log(`  e.g.            ${nginx.url}/?table=${encodeURIComponent(`${nginx.url}/tables/sample_table/cow/v9_txns_simple_meta`)}`);
console.log('Ctrl-C stops it.');
const stop = async () => {
  await nginx.stop();
  rmSync(work, { recursive: true, force: true });
  process.exit(0);
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
