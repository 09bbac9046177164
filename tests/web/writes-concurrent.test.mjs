// Several writers through the package as users install it (the `npm pack` tarball), on moto's
// S3: the write options reach the engine's optimistic concurrency under the storage lock
// (`options` with Hudi's multi-writer settings, `commitRetries`). A writer held between its
// snapshot and its commit point while another commits to the same file group fails CONFLICT
// naming the winner with `commitRetries: 0`, and commits on top with `commitRetries: 1`
// (`attempts: 2`); the edge-ingest worker in workerd, configured for multi-writer through its
// HUDI_WRITE_OPTIONS binding, takes concurrent POSTs that all commit. After each, the package,
// PyPI `hudi` and the CLI read the rows a model of the writes expects, and no pending instant,
// heartbeat or held lock is left.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { startMoto } from './lib/servers.mjs';
import { WRITE_TABLES, assertReadersAgree, dataOnly, installTarball, lines, loadTables, s3Options, txnRows } from './lib/writes.mjs';
import { startIngestWorker } from './ingest-worker.mjs';

const OCC = {
  'hoodie.write.concurrency.mode': 'optimistic_concurrency_control',
  'hoodie.write.lock.provider': 'org.apache.hudi.client.transaction.lock.StorageBasedLockProvider',
  'hoodie.cleaner.policy.failed.writes': 'LAZY',
};

let moto;
let project;
let pkg;

before(async () => {
  moto = await startMoto();
  loadTables(moto.url, 'occ-node', Object.values(WRITE_TABLES));
  loadTables(moto.url, 'occ-worker', [WRITE_TABLES.mor]);
  project = installTarball();
  pkg = await import(join(project, 'node_modules', 'hudi-edge', 'dist', 'node.js'));
});

after(async () => {
  await moto?.stop();
  if (project) rmSync(project, { recursive: true, force: true });
});

/** A proxy in front of moto that holds the first request `matches` picks once armed, until
 *  released: a writer paused at a chosen request while another one commits. */
async function startGate(target) {
  const t = new URL(target);
  let armed = null;
  const server = createServer((req, res) => {
    const forward = () => {
      const up = httpRequest({ host: t.hostname, port: t.port, path: req.url, method: req.method, headers: req.headers }, (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      });
      up.on('error', () => res.destroy());
      req.pipe(up);
    };
    if (armed && armed.matches(req)) {
      const a = armed;
      armed = null;
      a.hit(decodeURIComponent(req.url.split('?')[0]));
      a.released.then(forward);
    } else forward();
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    /** Holds the next request `matches` accepts; `hit` resolves with its path. */
    arm(matches) {
      let hit;
      let release;
      const a = { matches, hit: null, released: new Promise((r) => (release = r)) };
      const reached = new Promise((r) => (hit = r));
      a.hit = hit;
      armed = a;
      return { reached, release };
    },
    stop: () => new Promise((r) => server.close(r)),
  };
}

/** Waits until the gate holds `job`'s request; a job that settles first (it failed before
 *  that request) fails the wait instead of hanging it. */
const held = (hold, job) => Promise.race([hold.reached, job.then((r) => assert.fail(`settled before its data file: ${JSON.stringify(r)}`))]);

/** A data file's PUT (a base or log file outside `.hoodie/`): the writer has its snapshot and
 *  its requested instant, and has not reached its commit point. */
const dataFilePut = (req) => {
  const path = decodeURIComponent(req.url.split('?')[0]);
  return req.method === 'PUT' && !path.includes('/.hoodie/') && /\.parquet$|\.log\.\d+/.test(path);
};

/** The rows the table holds after `writes` on `base`: per key the row with the greatest
 *  ordering value (the tables merge by event time on `txn_ts`); data columns only. The MOR
 *  fixture holds one key twice, which the writes leave alone. */
function model(base, writes) {
  const m = new Map();
  for (const r of base) m.set(r.txn_id, [...(m.get(r.txn_id) ?? []), dataOnly(r)]);
  for (const r of writes.flat()) {
    const had = m.get(r.txn_id);
    if (!had || had.length > 1 || Number(had[0].txn_ts) <= Number(r.txn_ts)) m.set(r.txn_id, [dataOnly(r)]);
  }
  return lines([...m.values()].flat());
}

/** Base rows whose key is there once, changed by `who` with ordering value +`bump`. */
const changed = (base, n, who, bump) =>
  base
    .filter((r) => base.filter((x) => x.txn_id === r.txn_id).length === 1)
    .slice(0, n)
    .map((r) => ({ ...dataOnly(r), merchant_name: `${who} ${r.txn_id}`, txn_ts: Number(r.txn_ts) + bump }));

/** Nothing a writer leaves while at work: pending instants, heartbeats, a held lock. */
async function assertSettled(t, what) {
  await t.refresh();
  const pending = (await t.timeline()).filter((i) => i.state !== 'completed');
  assert.deepEqual(pending.map((i) => `${i.requestedTime} ${i.action} ${i.state}`), [], `${what}: no pending instant`);
  const w = await t.writers();
  assert.deepEqual(w.heartbeats, [], `${what}: no heartbeat`);
  assert.ok(w.lock === null || w.lock.expired, `${what}: the lock is released (${JSON.stringify(w.lock)})`);
}

describe('Node: multi-writer options reach the engine', () => {
  for (const [kind, name] of Object.entries(WRITE_TABLES)) {
    test(`${kind}: a writer that loses a conflict fails CONFLICT naming the winner, and commits on top with commitRetries`, async () => {
      const uri = `s3://occ-node/${name}`;
      const gate = await startGate(moto.url);
      const a = await pkg.HudiTable.open(uri, { s3: s3Options(moto.url) });
      const b = await pkg.HudiTable.open(uri, { s3: s3Options(gate.url) });
      try {
        const base = await a.rows();
        const writes = [];
        // Round 1: B takes its snapshot, A commits the same keys, B reaches its commit point.
        const a1 = changed(base, 3, 'A1', 1);
        const b1 = [...changed(base, 3, 'B1', 2), ...txnRows(kind, 4, { prefix: 'OCC-B1' })];
        let hold = gate.arm(dataFilePut);
        const b1Job = b.upsert(b1, { options: OCC, commitRetries: 0 });
        await held(hold, b1Job);
        const lost = b1Job.then(
          (r) => assert.fail(`B committed: ${JSON.stringify(r.instant)}`),
          (e) => e,
        );
        const ra1 = await a.upsert(a1, { options: OCC });
        assert.equal(ra1.attempts, 1);
        writes.push(a1);
        hold.release();
        const err = await lost;
        assert.ok(err instanceof pkg.ConflictError && err.code === 'CONFLICT', `${err.code}: ${err.message}`);
        assert.equal(err.instant, ra1.instant, err.message);
        await assertSettled(a, 'after the lost conflict');
        let now = await a.rows();
        assert.deepEqual(lines(now.map(dataOnly)), model(base, writes), 'only the winner is visible');
        assertReadersAgree(moto.url, uri, now, `${kind}: after the lost conflict`);

        // Round 2: the same race, B allowed one retry: it commits on the new snapshot.
        const a2 = changed(base, 3, 'A2', 3);
        const b2 = [...changed(base, 3, 'B2', 4), ...txnRows(kind, 4, { prefix: 'OCC-B2' })];
        hold = gate.arm(dataFilePut);
        const retried = b.upsert(b2, { options: OCC, commitRetries: 1 });
        await held(hold, retried);
        const ra2 = await a.upsert(a2, { options: OCC });
        writes.push(a2);
        hold.release();
        const rb2 = await retried;
        writes.push(b2);
        assert.equal(rb2.attempts, 2, 'the first try lost, the retry committed');
        assert.ok(rb2.instant > ra2.instant, `${rb2.instant} after ${ra2.instant}`);
        assert.deepEqual([rb2.inserted, rb2.updated], [4, 3]);
        await assertSettled(a, 'after the retried commit');
        now = await a.rows();
        assert.deepEqual(lines(now.map(dataOnly)), model(base, writes), 'both writers\' rows, the later ordering value winning');
        assertReadersAgree(moto.url, uri, now, `${kind}: after the retried commit`);
        const last = (await a.timeline()).at(-1);
        assert.deepEqual([last.requestedTime, last.state], [rb2.instant, 'completed']);
      } finally {
        a.close();
        b.close();
        await gate.stop();
      }
    });
  }
});

describe('workerd: the edge-ingest example with HUDI_WRITE_OPTIONS for several writers', () => {
  test('concurrent POSTs all commit; the table holds exactly their rows', async () => {
    const kind = 'mor';
    const uri = `s3://occ-worker/${WRITE_TABLES[kind]}`;
    const worker = await startIngestWorker(project, 'ingest-occ', uri, moto.url, { COMMIT_RETRIES: '5', HUDI_WRITE_OPTIONS: JSON.stringify(OCC) });
    const t = await pkg.HudiTable.open(uri, { s3: s3Options(moto.url) });
    try {
      const base = await t.rows();
      // Each POST: 30 new keys of its own and the same 2 existing keys (each a later version),
      // so the commits touch a common file group.
      const posts = [1, 2, 3].map((k) => [...changed(base, 2, `POST${k}`, k), ...txnRows(kind, 30, { prefix: `OCC-W${k}`, version: k })]);
      const answers = await Promise.all(
        posts.map(async (rows) => {
          const res = await fetch(worker.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(rows) });
          return { status: res.status, body: await res.json() };
        }),
      );
      for (const a of answers) assert.equal(a.status, 200, JSON.stringify(a.body));
      assert.deepEqual(answers.map((a) => a.body.inserted).sort(), [30, 30, 30]);
      assert.equal(new Set(answers.map((a) => a.body.instant)).size, 3);
      const attempts = answers.map((a) => a.body.attempts);
      assert.ok(attempts.every((n) => n >= 1), JSON.stringify(attempts));
      console.log(`# concurrent POSTs: attempts ${attempts.join(', ')}`);
      // The worker runs each write's table services after its answer (under the lock): the
      // table settles once they are done.
      await worker.settled();
      await assertSettled(t, 'after the concurrent POSTs');
      const now = await t.rows();
      assert.deepEqual(lines(now.map(dataOnly)), model(base, posts), 'every POST\'s rows, the latest version of the shared keys');
      assertReadersAgree(moto.url, uri, now, 'after the concurrent POSTs');
      // A misconfigured binding is an error, not a single-writer commit.
      const bad = await startIngestWorker(project, 'ingest-occ-bad', uri, moto.url, { HUDI_WRITE_OPTIONS: '{"hoodie.write.concurrency.mode": 1}' });
      try {
        const res = await fetch(bad.url, { method: 'POST', body: JSON.stringify(posts[0]) });
        assert.deepEqual([res.status, (await res.json()).code], [400, 'INVALID_ARGUMENT']);
      } finally {
        await bad.stop();
      }
    } finally {
      t.close();
      await worker.stop();
    }
  });
});
