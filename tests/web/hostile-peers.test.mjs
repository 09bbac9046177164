// The writer among hostile peers, on moto's S3 through a proxy that misbehaves
// (lib/fault-proxy.mjs): requests lost or answered 5xx after they took effect, spurious 412s
// on conditional PUTs, acknowledged PUTs invisible for a while, listings reordered or missing
// a key; and another writer that breaks the protocol (deletes our inflight instant, rewrites
// the lock file while we hold it, completes an instant with an older time, runs its clock 10
// minutes ahead). The native CLI writes (one process per commit, as a scheduled job would).
//
// After each scenario, read without faults by the CLI and PyPI `hudi`: both read the same
// rows, no key twice; every acknowledged write is there whole; a write that failed (with a
// typed error code) is there whole or not at all; each key holds the value of the newest write
// that is there; and the next write without faults commits and leaves no pending instant.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startMoto } from './lib/servers.mjs';
import { WRITE_TABLES, awsEnv, cliBin, cliLines, hudiRsLines, loadTables, python, S3_CREDS, txnRows } from './lib/writes.mjs';
import { startFaultProxy } from './lib/fault-proxy.mjs';
import { tempDir } from '../lib/harness.mjs';

const run = promisify(execFile);
const BUCKET = 'peers';
const TABLE = WRITE_TABLES.mor;
const CODES = new Set(['CONFLICT', 'IO', 'NOT_FOUND', 'CORRUPT', 'ABORTED']);
const OCC = {
  'hoodie.write.concurrency.mode': 'optimistic_concurrency_control',
  'hoodie.write.lock.provider': 'org.apache.hudi.client.transaction.lock.StorageBasedLockProvider',
  'hoodie.cleaner.policy.failed.writes': 'LAZY',
};
const SEED = 10; // keys SEED-00000 … written before the faults, updated by every write

let moto;
let proxy;
let scratch;

before(async () => {
  moto = await startMoto();
  proxy = await startFaultProxy(moto.url);
  scratch = tempDir('peers');
});

after(async () => {
  await proxy?.stop();
  await moto?.stop();
});

/** A fresh copy of the MOR fixture (metadata table with record index) at `s3://peers/<name>`. */
let copies = 0;
function freshTable() {
  loadTables(moto.url, BUCKET, [TABLE]);
  return { name: `t${++copies}`, uri: `s3://${BUCKET}/${TABLE}` };
}

/** Rows of write `w`: 5 new keys W<w>-*, and 3 of the seed keys set to version `w`. */
function rowsOf(w) {
  const fresh = txnRows('mor', 5, { prefix: `W${w}`, version: w });
  const seeds = [w % SEED, (w + 3) % SEED, (w + 6) % SEED].map((i) => txnRows('mor', 1, { prefix: 'SEED', from: i, version: w })[0]);
  return [...fresh, ...seeds];
}

/** One write by the CLI through `endpoint`: { w, ok, code, stderr, result }. */
async function write(uri, w, endpoint, options = {}, retries = 2) {
  const input = join(scratch, `w${w}-${Math.random().toString(36).slice(2)}.jsonl`);
  writeFileSync(input, rowsOf(w).map((r) => JSON.stringify(r)).join('\n') + '\n');
  const opts = Object.entries(options).flatMap(([k, v]) => ['--option', `${k}=${v}`]);
  const args = ['write', uri, '--input', input, '--json', '--endpoint', endpoint, '--region', S3_CREDS.region, '--path-style', '--retries', String(retries), ...opts];
  try {
    const { stdout } = await run(cliBin, args, { env: { ...process.env, ...awsEnv(moto.url) }, maxBuffer: 64 << 20 });
    return { w, ok: true, result: JSON.parse(stdout) };
  } catch (e) {
    const code = /error\[([A-Z_]+)\]/.exec(e.stderr ?? '')?.[1] ?? null;
    return { w, ok: false, code, stderr: e.stderr };
  }
}

/** The table's pending instants, as the CLI lists them without faults. */
async function pending(uri) {
  const { stdout } = await run(cliBin, ['timeline', uri, '--json', '--endpoint', moto.url, '--region', S3_CREDS.region, '--path-style'], { env: { ...process.env, ...awsEnv(moto.url) } });
  return JSON.parse(stdout).instants.filter((i) => i.state !== "completed");
}

/** What the readers see after `writes` (each { w, ok, code }), checked against the rules
 *  above; then a write without faults. Answers the writes found committed. */
async function assertConsistent(uri, writes, what) {
  const ours = cliLines(moto.url, uri);
  assert.deepEqual(hudiRsLines(moto.url, uri), ours, `${what}: PyPI hudi reads what the CLI reads`);
  const rows = ours.map((l) => JSON.parse(l));
  // (The fixture holds one of its own keys twice, as Spark wrote it; ours are unique.)
  const keys = rows.map((r) => r.txn_id).filter((k) => /^(SEED|W\d+)-/.test(k));
  assert.equal(new Set(keys).size, keys.length, `${what}: none of the written keys twice`);
  const committed = new Set([0]);
  for (const x of writes) {
    const present = keys.filter((k) => k.startsWith(`W${x.w}-`)).length;
    assert.ok(present === 0 || present === 5, `${what}: write ${x.w} is there whole or not at all (${present} of 5 rows)`);
    if (x.ok) assert.equal(present, 5, `${what}: acknowledged write ${x.w} is there`);
    else assert.ok(CODES.has(x.code), `${what}: write ${x.w} failed with a typed error: ${x.stderr}`);
    if (present === 5) committed.add(x.w);
  }
  for (let i = 0; i < SEED; i += 1) {
    const touching = [...committed].filter((w) => w === 0 || [w % SEED, (w + 3) % SEED, (w + 6) % SEED].includes(i));
    const newest = Math.max(...touching);
    const row = rows.find((r) => r.txn_id === `SEED-${String(i).padStart(5, '0')}`);
    assert.equal(row?.merchant_name, `merchant ${i} v${newest}`, `${what}: SEED-${i} holds the newest committed write's value`);
  }
  return committed;
}

/** A write without faults commits, and nothing is left pending. */
async function assertWritable(uri, w, what, options = {}) {
  proxy.reset();
  const r = await write(uri, w, proxy.url, options);
  assert.ok(r.ok, `${what}: the next write commits: ${r.stderr}`);
  assert.deepEqual(await pending(uri), [], `${what}: no pending instant after the next write`);
}

async function seeded() {
  const t = freshTable();
  const input = join(scratch, `seed-${t.name}.jsonl`);
  writeFileSync(input, txnRows('mor', SEED, { prefix: 'SEED', version: 0 }).map((r) => JSON.stringify(r)).join('\n') + '\n');
  await run(cliBin, ['write', t.uri, '--input', input, '--endpoint', moto.url, '--region', S3_CREDS.region, '--path-style'], { env: { ...process.env, ...awsEnv(moto.url) } });
  return t;
}

/** Deletes every object of the table (the next scenario loads a fresh copy). */
async function dropTable(uri) {
  const prefix = uri.replace(`s3://${BUCKET}/`, '');
  await run(python, ['-c', `
import boto3, sys
from botocore.config import Config
s3 = boto3.client("s3", endpoint_url=sys.argv[1], config=Config(s3={"addressing_style": "path"}))
b = s3.list_objects_v2
token = None
while True:
    page = b(Bucket=sys.argv[2], Prefix=sys.argv[3], **({"ContinuationToken": token} if token else {}))
    keys = [{"Key": o["Key"]} for o in page.get("Contents", [])]
    if keys: s3.delete_objects(Bucket=sys.argv[2], Delete={"Objects": keys})
    if not page.get("IsTruncated"): break
    token = page["NextContinuationToken"]
`, moto.url, BUCKET, prefix + '/'], { env: { ...process.env, ...awsEnv(moto.url) } });
}

/** A peer's direct request to the store: PUT (with `body`), DELETE, or a LIST of keys under
 *  `key` (answered as an array). Signed, by boto3 from the venv. */
async function peer(op, key, body = '') {
  const { stdout } = await run(python, ['-c', `
import boto3, json, sys
from botocore.config import Config
s3 = boto3.client("s3", endpoint_url=sys.argv[1], config=Config(s3={"addressing_style": "path"}))
op, bucket, key, body = sys.argv[2:6]
if op == "PUT": s3.put_object(Bucket=bucket, Key=key, Body=body.encode())
elif op == "DELETE": s3.delete_object(Bucket=bucket, Key=key)
else:
    keys, token = [], None
    while True:
        page = s3.list_objects_v2(Bucket=bucket, Prefix=key, **({"ContinuationToken": token} if token else {}))
        keys += [o["Key"] for o in page.get("Contents", [])]
        if not page.get("IsTruncated"): break
        token = page["NextContinuationToken"]
    print(json.dumps(keys))
`, moto.url, op, BUCKET, key, body], { env: { ...process.env, ...awsEnv(moto.url) } });
  return op === 'LIST' ? JSON.parse(stdout) : null;
}
const listKeys = (prefix) => peer('LIST', prefix);

describe('a store that misbehaves', () => {
  for (const fault of ['lost5xx', 'applied5xx', 'spurious412', 'stale', 'reorder', 'truncate']) {
    test(`${fault}: nothing acknowledged is lost, nothing half-written shows`, async (tc) => {
      const t = await seeded();
      try {
        proxy.reset();
        proxy.fault = fault;
        const writes = [];
        // Enough retries that a request lost every third time gets through.
        const retries = fault === 'lost5xx' ? 8 : 2;
        for (let w = 1; w <= 3; w += 1) writes.push(await write(t.uri, w, proxy.url, {}, retries));
        if (['lost5xx', 'spurious412', 'reorder'].includes(fault)) {
          assert.ok(writes.every((x) => x.ok), `${fault}: every write commits: ${writes.map((x) => x.stderr ?? 'ok')}`);
        }
        const faults = proxy.log.filter((e) => e.fault).length;
        assert.ok(faults > 0, `${fault}: the proxy misbehaved (${faults} times)`);
        const outcomes = writes.map((x) => (x.ok ? 'committed' : x.code)).join(', ');
        tc.diagnostic(`${fault}: ${faults} faults in ${proxy.log.length} requests; writes: ${outcomes}`);
        for (const x of writes.filter((x) => !x.ok)) tc.diagnostic(`write ${x.w}: ${x.stderr.trim()}`);
        if (process.env.PEERS_DEBUG) {
          const refused = new Set(proxy.log.filter((e) => e.status === 412 || e.fault === 'lost5xx').map((e) => e.key));
          for (const e of proxy.log.filter((e) => refused.has(e.key) || e.key.endsWith('.inflight') || (e.list && /\.hoodie\/timeline/.test(e.prefix ?? '')))) {
            tc.diagnostic(`${e.at % 100000} ${e.method} ${e.key} ${e.prefix ?? ''} ${e.status} ${e.fault ?? ''}`);
          }
        }
        proxy.reset();
        await assertConsistent(t.uri, writes, fault);
        await assertWritable(t.uri, 4, fault);
        await assertConsistent(t.uri, [...writes, { w: 4, ok: true }], `${fault}, then a clean write`);
      } finally {
        await dropTable(t.uri);
      }
    });
  }
});

/** A data file's PUT (outside `.hoodie/`): the writer is past its inflight instant and
 *  before its commit point. */
const dataFilePut = (req) => req.method === 'PUT' && !decodeURIComponent(req.url).includes('/.hoodie/') && /\.parquet|\.log\.\d+/.test(req.url);

describe('a peer that breaks the protocol', () => {
  test('deletes our inflight instant while we write: CONFLICT, nothing of ours shows', async () => {
    const t = await seeded();
    try {
      proxy.reset();
      const hold = proxy.hold(dataFilePut);
      const job = write(t.uri, 1, proxy.url);
      await Promise.race([hold.reached, job.then((r) => assert.fail(`settled before its data files: ${JSON.stringify(r)}`))]);
      const prefix = `${TABLE}/.hoodie/timeline/`;
      // Ours is the newest (the older ones stay beside their completed instants).
      const ours = (await listKeys(prefix)).filter((k) => /\/\d{17}\.deltacommit\.inflight$/.test(k)).sort().at(-1);
      assert.ok(ours, 'our inflight instant is there to delete');
      await peer('DELETE', ours);
      hold.release();
      const r = await job;
      assert.equal(r.ok, false, `the write does not commit: ${JSON.stringify(r.result?.instant)}`);
      assert.equal(r.code, 'CONFLICT', r.stderr);
      await assertConsistent(t.uri, [r], 'inflight deleted');
      await assertWritable(t.uri, 2, 'inflight deleted');
    } finally {
      await dropTable(t.uri);
    }
  });

  for (const [what, body] of [
    ['garbage', 'not a lock {'],
    ['another owner', JSON.stringify({ expired: false, validUntil: Date.now() + 600_000, owner: 'peer-owner' })],
  ]) {
    test(`rewrites the lock file with ${what} while we hold it: CONFLICT, nothing of ours shows`, async () => {
      const t = await seeded();
      try {
        proxy.reset();
        // A multi-writer write takes the lock twice: for its instant time (acquire, release),
        // then for its conflict check and commit point. Held: that check's timeline listing.
        let lockPuts = 0;
        const lockKey = `${TABLE}/.hoodie/.locks/table_lock.json`;
        const hold = proxy.hold((req) => {
          const path = decodeURIComponent(req.url);
          if (req.method === 'PUT' && path.includes('/.hoodie/.locks/')) lockPuts += 1;
          return lockPuts >= 3 && /list-type=2/.test(req.url) && path.includes('.hoodie/timeline');
        });
        const job = write(t.uri, 1, proxy.url, OCC);
        await Promise.race([hold.reached, job.then((r) => assert.fail(`settled before its commit point: ${JSON.stringify(r)}`))]);
        const locks = await listKeys(`${TABLE}/.hoodie/.locks/`);
        assert.ok(locks.length === 1, `one lock file (${locks})`);
        await peer('PUT', locks[0] ?? lockKey, body);
        hold.release();
        const r = await job;
        assert.equal(r.ok, false, `the write does not commit: ${JSON.stringify(r.result?.instant)}`);
        assert.equal(r.code, 'CONFLICT', r.stderr);
        assert.match(r.stderr, /lock file was rewritten/);
        await assertConsistent(t.uri, [r], `lock rewritten with ${what}`);
        // The peer's lock stays the peer's (a live lease, or a file no writer can parse):
        // the next multi-writer write waits for it or names it; a single writer goes on.
        await peer('DELETE', locks[0] ?? lockKey);
        await assertWritable(t.uri, 2, `lock rewritten with ${what}`, OCC);
      } finally {
        await dropTable(t.uri);
      }
    });
  }

  test('completes an instant with an older time, and runs its clock 10 minutes ahead: our writes order after both', async () => {
    const t = await seeded();
    try {
      const prefix = `${TABLE}/.hoodie/timeline/`;
      const completed = (await listKeys(prefix)).filter((k) => /\/\d{17}_\d{17}\.deltacommit$/.test(k)).sort();
      const [older, olderDone] = /(\d{17})_(\d{17})/.exec(completed.at(-1)).slice(1);
      // An empty commit requested just before the newest one and completed now.
      const before = String(BigInt(older) - 1n);
      const now = new Date().toISOString().replace(/[-:TZ.]/g, '').slice(0, 17);
      const empty = JSON.stringify({ partitionToWriteStats: {}, compacted: false, extraMetadata: {}, operationType: 'UPSERT' });
      await peer('PUT', `${prefix}${before}_${now > olderDone ? now : String(BigInt(olderDone) + 1n)}.deltacommit`, empty);
      // A write requested 10 minutes ahead of our clock, left inflight (its writer died).
      const ahead = new Date(Date.now() + 600_000).toISOString().replace(/[-:TZ.]/g, '').slice(0, 17);
      await peer('PUT', `${prefix}${ahead}.deltacommit.requested`, '');
      const r = await write(t.uri, 1, moto.url);
      assert.ok(r.ok, `our write commits: ${r.stderr}`);
      assert.ok(r.result.instant > ahead, `our instant ${r.result.instant} comes after the peer's ${ahead}`);
      await assertConsistent(t.uri, [r], 'older completion, clock ahead');
      await assertWritable(t.uri, 2, 'older completion, clock ahead');
    } finally {
      await dropTable(t.uri);
    }
  });
});
