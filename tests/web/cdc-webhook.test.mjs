// The cdc-webhook example (pkg-config/examples/cdc-webhook) for real in workerd: the packed
// tarball bundled as wrangler would, its `scheduled` handler run through a service binding (as
// a Cron Trigger runs it), the checkpoint in a KV namespace (and, last, in an R2 bucket: an
// object next to the table), the table a Spark-written Merge-On-Read CDC table served by nginx,
// and a local HTTP receiver.
// The table starts with its last two commits still in flight (their completed instant files
// held back): the first run delivers every change before them; then they complete, and a
// receiver that accepts one batch and then answers 500 stops the run with the checkpoint at the
// batch it accepted; the next run delivers the rest — the failed batch again — and a run with
// nothing new posts nothing. What was delivered equals Spark's feed, commit by commit.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, readdirSync, renameSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { repo, startNginx, unzippedFixtures, writeManifests } from './lib/servers.mjs';
import { installTarball, startBindingStore, startWorker } from './lib/writes.mjs';
import { expectedFeeds, sortedFeed } from '../lib/cdc.mjs';
import { tempDir } from '../lib/harness.mjs';

const NAME = 'cdc_v9_mor_data_before_after';
const exp = expectedFeeds(NAME);
const BATCH = 5;

/** A local HTTP server: `handle(req, body)` answers a status; every request is kept. */
async function startServer(handle) {
  const seen = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const answer = handle(req, body, seen);
      seen.push({ method: req.method, url: req.url, headers: req.headers, body, status: answer.status, tag: answer.tag });
      res.writeHead(answer.status, { 'content-type': 'text/plain' }).end(answer.body ?? '');
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${server.address().port}`, seen, stop: () => new Promise((r) => server.close(r)) };
}

let nginx;
let kv;
let receiver;
let worker;
let tableDir;
let project;
let store;
/** What the receiver answers in this run: `ok`, or `fail-after-one` (one 200, then 500s). */
let mode = 'ok';
const held = [];

before(async () => {
  // A private copy of the table: its last two commits made in flight again.
  const root = tempDir('cdc-webhook');
  tableDir = join(root, NAME);
  cpSync(join(unzippedFixtures(), 'cdc', NAME), tableDir, { recursive: true });
  const timeline = join(tableDir, '.hoodie', 'timeline');
  const last = exp.completed_instants.slice(-2);
  for (const i of last) {
    const file = `${i.requested_time}_${i.completion_time}.${i.action}`;
    renameSync(join(timeline, file), join(root, file));
    held.push(file);
  }
  writeManifests(tableDir);
  nginx = await startNginx({ mounts: { '/live/': root } });
  kv = await startBindingStore('kv');
  store = kv.store;
  receiver = await startServer((req, body, seen) => {
    const inRun = seen.filter((s) => s.tag === run.count).length;
    return { status: mode === 'fail-after-one' && inRun > 0 ? 500 : 200, tag: run.count };
  });
  project = installTarball();
  worker = await startExample('kv', { kv: { CHECKPOINT_KV: kv.url } });
});

/** The example in workerd, its checkpoint in the `stores` bindings. */
function startExample(name, stores) {
  const dir = join(project, `cdc-webhook-${name}`);
  mkdirSync(dir, { recursive: true });
  cpSync(join(repo, 'pkg-config', 'examples', 'cdc-webhook', 'worker.js'), join(dir, 'worker.js'));
  cpSync(join(project, 'node_modules'), join(dir, 'node_modules'), { recursive: true });
  return startWorker(dir, 'worker.js', { TABLE_URL: `${nginx.url}/live/${NAME}`, TARGET_URL: `${receiver.url}/hook`, BATCH_SIZE: String(BATCH) }, stores);
}

after(async () => {
  await worker?.stop();
  await nginx?.stop();
  await kv?.stop();
  await receiver?.stop();
});

const KEY = `live/${NAME}.cdc-checkpoint.json`;
const checkpoint = () => (store.has(KEY) ? JSON.parse(store.get(KEY)) : null);

/** Runs the scheduled handler once; the receiver's requests it made (tagged with `mode`). */
async function run(receiverMode, w = worker) {
  mode = receiverMode;
  run.count = (run.count ?? 0) + 1;
  const outcome = await w.scheduled();
  const posts = receiver.seen.filter((p) => p.tag === run.count);
  for (const p of posts) p.mode = receiverMode;
  return { outcome, posts };
}

/** Posted batches as Spark's `[op, ts_ms, before, after]` rows: images compared parsed. */
const asRows = (posts) => posts.flatMap((p) => JSON.parse(p.body).changes.map((c) => [c.op, c.instant, c.before, c.after]));
const parsed = (rows) => rows.map(([op, ts, b, a]) => [op, ts, b === null ? null : JSON.parse(b), a === null ? null : JSON.parse(a)]);
const canonical = (rows) => rows.map((r) => JSON.stringify(r)).sort();
/** Spark's per-commit feeds whose commit is `end` in `ends`. */
const sparkRows = (ends) => parsed(exp.feeds.slice(1).filter((f) => ends.includes(f.end)).flatMap((f) => f.rows));

test('the first run delivers every change of the completed commits, in batches, oldest commit first', async () => {
  const { outcome, posts } = await run('ok');
  assert.equal(outcome.outcome, 'ok', JSON.stringify(outcome));
  const done = exp.completed_instants.slice(0, -2).map((i) => i.requested_time);
  const want = sparkRows(done);
  assert.ok(want.length > 30, `${want.length} changes`);
  assert.deepEqual(canonical(asRows(posts)), canonical(want));
  const bodies = posts.map((p) => JSON.parse(p.body));
  assert.ok(bodies.every((b) => b.changes.length <= BATCH && b.changes.length > 0));
  assert.deepEqual(bodies.map((b) => b.instant), [...bodies.map((b) => b.instant)].sort(), 'oldest commit first');
  assert.ok(posts.every((p) => p.headers['content-type'] === 'application/json' && p.headers['idempotency-key'].includes(`@${JSON.parse(p.body).instant}+`)));
  assert.deepEqual(checkpoint(), { instant: done.at(-1), partial: null });
  console.log(`first run: ${posts.length} batches, ${want.length} changes equal Spark's feed of ${done.length} commits`);
});

test('a receiver answering 500 stops the run; the checkpoint stays at the last batch it accepted', async () => {
  // The two commits complete.
  for (const f of held) renameSync(join(tableDir, '..', f), join(tableDir, '.hoodie', 'timeline', f));
  writeManifests(tableDir);
  const before = checkpoint();
  const { outcome, posts } = await run('fail-after-one');
  assert.equal(outcome.outcome, 'exception', 'the run reports its failure');
  assert.deepEqual(posts.map((p) => p.status), [200, 500]);
  const accepted = JSON.parse(posts[0].body);
  assert.equal(accepted.offset, 0);
  assert.equal(accepted.changes.length, BATCH);
  // Moved by the accepted batch only: an offset into the commit's changes.
  assert.deepEqual(checkpoint(), { instant: before.instant, partial: { instant: accepted.instant, offset: BATCH } });
});

test('the next run delivers the rest, the failed batch again; all of it is Spark\'s feed of the two commits', async () => {
  const failed = receiver.seen.find((p) => p.status === 500);
  const { outcome, posts } = await run('ok');
  assert.equal(outcome.outcome, 'ok');
  assert.equal(posts[0].body, failed.body, 'the failed batch, sent again as it was');
  const accepted = receiver.seen.filter((p) => p.mode === 'fail-after-one' && p.status === 200);
  const ends = exp.completed_instants.slice(-2).map((i) => i.requested_time);
  assert.deepEqual(canonical(asRows([...accepted, ...posts])), canonical(sparkRows(ends)));
  assert.deepEqual(checkpoint(), { instant: ends.at(-1), partial: null });
});

test('a run with nothing new posts nothing; GET shows the checkpoint and nothing pending', async () => {
  const { outcome, posts } = await run('ok');
  assert.equal(outcome.outcome, 'ok');
  assert.deepEqual(posts, []);
  const state = await fetch(worker.url).then((r) => r.json());
  assert.deepEqual(state.pending, []);
  assert.equal(state.checkpoint.instant, exp.completed_instants.at(-1).requested_time);
  assert.ok(readdirSync(join(tableDir, '.hoodie', 'timeline')).length > 0);
});

test('the checkpoint in an R2 bucket, next to the table: a fresh worker delivers the whole feed once', async () => {
  const r2 = await startBindingStore('r2');
  const other = await startExample('r2', { r2: { CHECKPOINT_BUCKET: r2.url } });
  try {
    const first = await run('ok', other);
    assert.equal(first.outcome.outcome, 'ok');
    const all = exp.completed_instants.map((i) => i.requested_time);
    assert.deepEqual(canonical(asRows(first.posts)), canonical(sparkRows(all)));
    assert.deepEqual(JSON.parse(r2.store.get(KEY)), { instant: all.at(-1), partial: null });
    const again = await run('ok', other);
    assert.equal(again.outcome.outcome, 'ok');
    assert.deepEqual(again.posts, []);
  } finally {
    await other.stop();
    await r2.stop();
  }
});
