// The edge-ingest example worker (pkg-config/examples/edge-ingest) as the write tests run it:
// copied beside the installed tarball, bundled and served in workerd with its bindings pointing
// at a table on moto, behind lib/settling-worker.js.
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repo } from './lib/servers.mjs';
import { startWorker } from './lib/writes.mjs';
import { settled } from './lib/settling-worker.js';

/** Starts the example in `project/<name>` for the table `uri` on moto at `motoUrl`; `bindings`
 *  add to (or replace) the S3 ones. Returns startWorker's { url, pid, stop() } and settled(),
 *  which resolves once the work the worker does after its answers so far is done. */
export async function startIngestWorker(project, name, uri, motoUrl, bindings = {}) {
  const dir = join(project, name);
  mkdirSync(dir, { recursive: true });
  cpSync(join(repo, 'pkg-config', 'examples', 'edge-ingest', 'worker.js'), join(dir, 'worker.js'));
  cpSync(join(repo, 'tests', 'web', 'lib', 'settling-worker.js'), join(dir, 'settling.js'));
  writeFileSync(join(dir, 'entry.js'), "import worker from './worker.js';\nimport { settling } from './settling.js';\nexport default settling(worker);\n");
  cpSync(join(project, 'node_modules'), join(dir, 'node_modules'), { recursive: true });
  const worker = await startWorker(dir, 'entry.js', {
    TABLE_URL: uri,
    S3_ENDPOINT: motoUrl,
    S3_REGION: 'us-east-1',
    S3_ACCESS_KEY_ID: 's3-key-from-a-binding',
    S3_SECRET_ACCESS_KEY: 's3-secret-from-a-binding',
    S3_FORCE_PATH_STYLE: 'true',
    ...bindings,
  });
  return { ...worker, settled: () => settled(worker.url) };
}
