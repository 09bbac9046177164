// Error codes and classes against real servers: a missing table, 403s, a Lance table, tables
// corrupted on disk, aborts (before and during a read of a rate-limited table), bad arguments;
// and no credentials or tokens in any message.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, readdirSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after } from 'node:test';
import {
  AbortedError,
  AccessDeniedError,
  CorruptError,
  HudiError,
  HudiTable,
  InvalidArgumentError,
  IoError,
  NotFoundError,
  UnsupportedError,
} from 'hudi-edge';
import { freePort, writeManifests } from '../../tests/web/lib/servers.mjs';
import { V9, useNginx } from './helpers.mjs';
import { tempDir } from '../../tests/lib/harness.mjs';

// Copies of a v9 table, each broken in one way.
const broken = tempDir('broken');
let truncated;
let badCommit;
const server = useNginx((root) => {
  const src = join(root, 'tables', V9);
  for (const n of ['parquet', 'commit', 'properties']) cpSync(src, join(broken, n), { recursive: true });
  const us = join(broken, 'parquet', 'region=us');
  const latest = readdirSync(us).filter((f) => f.endsWith('.parquet')).sort((a, b) => (a.split('_').at(-1) < b.split('_').at(-1) ? 1 : -1))[0];
  truncateSync(join(us, latest), 1000);
  truncated = `region=us/${latest}`;
  const timeline = join(broken, 'commit', '.hoodie', 'timeline');
  badCommit = readdirSync(timeline).filter((f) => f.endsWith('.commit')).sort()[0];
  writeFileSync(join(timeline, badCommit), 'this is not json {');
  writeManifests(broken);
  // The CLI refuses to open a table with unreadable properties, so that one breaks after its
  // manifest is written, keeping the size the manifest records.
  const properties = join(broken, 'properties', '.hoodie', 'hoodie.properties');
  writeFileSync(properties, Buffer.alloc(statSync(properties).size, 0xff));
  return { '/broken/': broken };
});
after(() => rmSync(broken, { recursive: true, force: true }));

const is = (Class, code, object) => (e) => {
  assert.ok(e instanceof Class, `${e?.name}: ${e?.message}`);
  assert.ok(e instanceof HudiError);
  assert.equal(e.code, code);
  // The object as the storage names it: a path, or a URL without query or credentials.
  if (object !== undefined) assert.ok(e.object === object || (e.object.endsWith(`/${object}`) && !/[?@]/.test(e.object)), e.object);
  return true;
};

test('NOT_FOUND: no table at the URL; an instant that does not exist', async () => {
  await assert.rejects(HudiTable.open(`${server.url}/tables/no/such/table`), is(NotFoundError, 'NOT_FOUND'));
  const t = await HudiTable.open(`${server.url}/tables/${V9}`);
  await assert.rejects(t.commit('19990101000000000'), is(NotFoundError, 'NOT_FOUND', 'instant 19990101000000000'));
});

test('ACCESS_DENIED: a 403 on hoodie.properties, and on the data files only', async () => {
  await assert.rejects(HudiTable.open(`${server.url}/denied/${V9}`), is(AccessDeniedError, 'ACCESS_DENIED', '.hoodie/hoodie.properties'));
  const t = await HudiTable.open(`${server.url}/partial/${V9}`);
  assert.ok((await t.timeline()).length > 0, 'metadata is readable');
  await assert.rejects(t.rows(), (e) => is(AccessDeniedError, 'ACCESS_DENIED')(e) && /\.parquet$/.test(e.object));
});

test('UNSUPPORTED: a table with Lance base files; s3:// without S3 support in this build', async () => {
  await assert.rejects(
    HudiTable.open(`${server.url}/tables/sample_table/cow/v9_lance_nonpartitioned`),
    (e) => is(UnsupportedError, 'UNSUPPORTED')(e) && /LANCE/.test(e.message),
  );
});

test('CORRUPT: a truncated base file, a commit file that is not JSON, unreadable hoodie.properties', async () => {
  const t = await HudiTable.open(`${server.url}/broken/parquet`);
  await assert.rejects(t.rows(), is(CorruptError, 'CORRUPT', truncated));
  const c = await HudiTable.open(`${server.url}/broken/commit`);
  const requested = badCommit.split('_')[0];
  await assert.rejects(c.commit(requested), is(CorruptError, 'CORRUPT', `.hoodie/timeline/${badCommit}`));
  const instants = await c.timeline();
  assert.equal(instants.find((i) => i.requestedTime === requested).operation, null, 'the timeline still lists it');
  await assert.rejects(HudiTable.open(`${server.url}/broken/properties`), is(CorruptError, 'CORRUPT', '.hoodie/hoodie.properties'));
});

test('ABORTED: an already aborted signal, and an abort during a slow read', { timeout: 120_000 }, async () => {
  await assert.rejects(HudiTable.open(`${server.url}/tables/${V9}`, { signal: AbortSignal.abort() }), is(AbortedError, 'ABORTED'));
  const t = await HudiTable.open(`${server.url}/slow/${V9}`);
  await assert.rejects(t.rows({ signal: AbortSignal.abort() }), is(AbortedError, 'ABORTED'));

  // Base files are ~430 KB at 64 KB/s: abort the moment the first data bytes arrive.
  const controller = new AbortController();
  const seen = [];
  const sizes = new Map(readdirSync(join(server.root, 'tables', V9), { recursive: true }).filter((f) => f.endsWith('.parquet')).map((f) => [f.split('/').at(-1), statSync(join(server.root, 'tables', V9, f)).size]));
  const before = t.io().bytes;
  await assert.rejects(
    t.rows({
      signal: controller.signal,
      onProgress: (p) => {
        seen.push(p);
        if (p.bytes > 0) controller.abort();
      },
    }),
    is(AbortedError, 'ABORTED'),
  );
  const atRejection = t.io().bytes;
  assert.ok(atRejection - before < [...sizes.values()].reduce((a, b) => a + b, 0), 'rejected before the data was read');
  // The requests were cancelled, not read to the end: nginx logs a data transfer the client cut
  // short (fewer body bytes than the file) once it notices; until then the test waits.
  const cut = () =>
    server.nginx.accessLog().some((l) => {
      const m = / "GET \/slow\/\S*\/([^/ ]+\.parquet) HTTP\/[\d.]+" (\d+) (\d+)/.exec(l);
      return m && sizes.has(m[1]) && Number(m[3]) < sizes.get(m[1]);
    });
  while (!cut()) await new Promise((r) => setTimeout(r, 50)); // a poll, not a deadline
  assert.equal(t.io().bytes, atRejection, 'nothing was counted after the read was aborted');
  const fast = await HudiTable.open(`${server.url}/tables/${V9}`);
  assert.equal((await fast.rows({ limit: 1 })).length, 1);

  // A timeout's reason (the TimeoutError AbortSignal.timeout gives) is ABORTED too. Fired from
  // the read's own progress, not a timer: reads that skip the footers' bloom filters can end
  // within any fixed time here.
  const timed = new AbortController();
  const timedOut = () => timed.abort(new DOMException('The operation timed out.', 'TimeoutError'));
  await assert.rejects(t.rows({ signal: timed.signal, onProgress: timedOut }), (e) => is(AbortedError, 'ABORTED')(e) && e.name === 'TimeoutError' && e.cause === timed.signal.reason);
});

test('INVALID_ARGUMENT: bad URLs, unknown columns, bad options, a closed table', async () => {
  // In Node a string without a scheme is a local path.
  await assert.rejects(HudiTable.open('not a url'), is(NotFoundError, 'NOT_FOUND'));
  await assert.rejects(HudiTable.open('ftp://example.com/t'), is(InvalidArgumentError, 'INVALID_ARGUMENT'));
  const t = await HudiTable.open(`${server.url}/tables/${V9}`);
  await assert.rejects(t.rows({ filters: [['no_such_column', '=', 1]] }), (e) => is(InvalidArgumentError, 'INVALID_ARGUMENT')(e) && /no_such_column/.test(e.message));
  await assert.rejects(t.rows({ query: 'sideways' }), is(InvalidArgumentError, 'INVALID_ARGUMENT'));
  await assert.rejects(t.rows({ filters: [['region', '~~', 'x']] }), is(InvalidArgumentError, 'INVALID_ARGUMENT'));
  t.close();
  assert.throws(() => t.io(), is(InvalidArgumentError, 'INVALID_ARGUMENT'));
  await assert.rejects(t.rows(), is(InvalidArgumentError, 'INVALID_ARGUMENT'));
});

test('no credentials or tokens in messages', async () => {
  const secret = 'S3CR3T-t0ken';
  const closed = await freePort(); // nothing listens there: connection refused
  const attempts = [
    () => HudiTable.open(`http://user:${secret}@127.0.0.1:${server.url.split(':').at(-1)}/tables/nope?token=${secret}`),
    () => HudiTable.open(`http://127.0.0.1:${closed}/tables/x?sig=${secret}`, { retries: 0 }),
    () => HudiTable.open(`${server.url}/denied/x?X-Amz-Signature=${secret}`, { headers: { Authorization: `Bearer ${secret}` } }),
  ];
  for (const a of attempts) {
    await assert.rejects(a(), (e) => {
      assert.ok(e instanceof HudiError);
      assert.ok(!e.message.includes(secret) && !String(e.object).includes(secret) && !e.stack.includes(secret), e.message);
      return true;
    });
  }
  await assert.rejects(HudiTable.open(`http://127.0.0.1:${closed}/tables/x`, { retries: 1 }), is(IoError, 'IO'));
});

test('credentials in the URL are sent as Basic auth, tokens in the query with every request', async () => {
  const t = await HudiTable.open(`http://user:pw@${server.url.slice(7)}/tables/${V9}?token=abc`);
  assert.equal(t.location, `${server.url}/tables/${V9}`);
  assert.equal((await t.rows()).length, 12);
  const log = server.nginx.accessLog().filter((l) => l.includes('?token=abc'));
  assert.ok(log.length > 5, 'token on requests');
  assert.ok(log.every((l) => / user \[/.test(l)), 'basic auth user logged');
});
