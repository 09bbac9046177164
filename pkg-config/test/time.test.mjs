// Time: on a `LOCAL` timeline (instants in the writer's wall clock) `asOf` given as a point in
// time is read in the `timeZone` option (UTC unless given), never in the host's zone: the same
// answers under any `TZ`. An `asOf` before the table's first commit is INVALID_ARGUMENT, not
// an empty result.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { HudiTable, InvalidArgumentError } from 'hudi-edge';
import { unzippedFixtures } from '../../tests/web/lib/servers.mjs';
import { cliBin, tempDir } from '../../tests/lib/harness.mjs';
import { V6, V9 } from './helpers.mjs';

const scratch = tempDir('pkg-time');
after(() => rmSync(scratch, { recursive: true, force: true }));
const copy = (name) => {
  const dir = join(scratch, name.split('/').at(-1));
  cpSync(join(unzippedFixtures(), 'tables', name), dir, { recursive: true });
  return dir;
};
const local = copy(V6);
const utc = copy(V9);

/** `yyyyMMddHHmmssSSS` read as a wall clock `offsetMinutes` east of UTC → epoch millis. */
const at = (instant, offsetMinutes) => {
  const n = (a, b) => Number(instant.slice(a, b));
  return Date.UTC(n(0, 4), n(4, 6) - 1, n(6, 8), n(8, 10), n(10, 12), n(12, 14), n(14, 17)) - offsetMinutes * 60_000;
};

test('a LOCAL timeline: asOf read in timeZone (default UTC); Dates and offsets alike', async () => {
  assert.doesNotMatch(readFileSync(join(local, '.hoodie', 'hoodie.properties'), 'utf8'), /timeline\.timezone=UTC/, 'the fixture is LOCAL');
  const kolkata = await HudiTable.open(local, { timeZone: 'Asia/Kolkata' });
  const writes = (await kolkata.timeline()).filter((i) => i.state === 'completed' && i.action === 'commit');
  assert.ok(writes.length >= 2);
  const second = writes[1].requestedTime;
  const point = at(second, 330); // the second commit, had it been written in Kolkata
  for (const asOf of [new Date(point), new Date(point).toISOString(), new Date(point + 330 * 60_000).toISOString().replace('Z', '+05:30')]) {
    assert.equal((await kolkata.plan({ asOf })).asOf, second, String(asOf));
  }
  // Times without an offset and instants are the timeline's clock already.
  assert.equal((await kolkata.plan({ asOf: second })).asOf, second);
  kolkata.close();

  // Default UTC: the same point is 5.5 hours before the second commit's wall clock, before
  // the table's first commit.
  const plain = await HudiTable.open(local);
  await assert.rejects(plain.plan({ asOf: new Date(point) }), (e) => e instanceof InvalidArgumentError && /before the table's first commit/.test(e.message));
  assert.equal((await plain.plan({ asOf: new Date(at(second, 0)) })).asOf, second);
  plain.close();
  await assert.rejects(HudiTable.open(local, { timeZone: 'Mars/Olympus' }), InvalidArgumentError);
});

test('Node\'s TZ does not change a result', () => {
  const script = join(scratch, 'tz.mjs');
  writeFileSync(
    script,
    `import { HudiTable } from ${JSON.stringify(join(import.meta.dirname, '..', 'dist', 'node.js'))};
     const t = await HudiTable.open(${JSON.stringify(local)});
     const out = [];
     for (const asOf of ['2024-04-18T17:32:40Z', '2024-04-18T17:32:20Z', '2024-04-18T12:02:40Z', new Date(Date.UTC(2024, 3, 18, 17, 32, 40))]) {
       out.push(await t.plan({ asOf }).then((p) => p.asOf, (e) => e.code));
     }
     const k = await HudiTable.open(${JSON.stringify(local)}, { timeZone: 'Asia/Kolkata' });
     out.push(await k.plan({ asOf: '2024-04-18T12:02:40Z' }).then((p) => p.asOf, (e) => e.code));
     out.push((await t.rows({ asOf: '2024-04-18T17:32:20Z' })).length);
     console.log(JSON.stringify(out));`,
  );
  const runs = ['UTC', 'America/New_York', 'Asia/Kolkata', 'Pacific/Chatham'].map((TZ) =>
    execFileSync(process.execPath, [script], { cwd: join(import.meta.dirname, '..'), env: { ...process.env, TZ }, encoding: 'utf8' }).trim(),
  );
  assert.deepEqual(new Set(runs).size, 1, runs.join('\n'));
  const [first, before, early, date, kolkata, rows] = JSON.parse(runs[0]);
  assert.deepEqual([first, before, early, date, kolkata], ['20240418173235694', '20240418173213674', 'INVALID_ARGUMENT', '20240418173235694', '20240418173235694']);
  assert.ok(rows > 0);
});

test('asOf before the first commit: INVALID_ARGUMENT in the package and the CLI, on UTC and LOCAL timelines', async () => {
  for (const dir of [utc, local]) {
    const t = await HudiTable.open(dir);
    for (const call of [() => t.rows({ asOf: '2000-01-01T00:00:00Z' }), () => t.plan({ asOf: '20000101000000000' }), () => t.read({ asOf: new Date(0) })]) {
      await assert.rejects(call(), (e) => {
        assert.equal(e.code, 'INVALID_ARGUMENT', e.message);
        assert.match(e.message, /asOf "[^"]+" \(instant \d{17}\) is before the table's first commit \d{17}/);
        return true;
      });
    }
    t.close();
    const r = spawnSync(cliBin, ['read', dir, '--as-of', '2000-01-01'], { encoding: 'utf8' });
    assert.notEqual(r.status, 0, r.stderr);
    assert.match(r.stderr, /error\[INVALID_ARGUMENT\].*before the table's first commit/);
  }
});
