// cdc-webhook: a Cloudflare Workers / workerd worker that turns a Hudi table's change feed
// into webhook calls, with the hudi-edge package.
//
//   scheduled  (a Cron Trigger) reads the change feed of every commit completed since the
//              checkpoint and POSTs it to TARGET_URL as JSON batches, commit by commit, oldest
//              first; the checkpoint moves after each batch the target accepted (2xx), so
//              delivery is at least once: a failed batch is sent again by the next run.
//   GET /      → 200 with the checkpoint and the commits still to deliver (nothing is sent)
//
// Configuration comes from the worker's bindings (vars, secrets, a KV namespace or an R2
// bucket for the checkpoint), see README.md.
import { HudiTable } from 'hudi-edge';

/** Actions whose commits carry changes (compaction commits on Merge-On-Read tables are
 *  `commit`s too; their feed is empty). */
const WRITES = new Set(['commit', 'deltacommit', 'replacecommit']);

function setting(env, name, fallback) {
  const raw = env[name] ?? String(fallback);
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`the ${name} binding must be a positive integer, got ${JSON.stringify(raw)}`);
  return n;
}

/** Where the checkpoint lives: a KV namespace (CHECKPOINT_KV) or an object in an R2 bucket
 *  (CHECKPOINT_BUCKET), by default next to the table: `<table prefix>.cdc-checkpoint.json`. */
export function checkpointStore(env) {
  const tableKey = String(env.TABLE_URL ?? '').replace(/^[a-z0-9]+:\/\/[^/]*\/?/i, '').replace(/\/+$/, '');
  const key = env.CHECKPOINT_KEY || `${tableKey || 'table'}.cdc-checkpoint.json`;
  if (env.CHECKPOINT_KV) {
    return { where: `KV ${key}`, get: () => env.CHECKPOINT_KV.get(key), put: (text) => env.CHECKPOINT_KV.put(key, text) };
  }
  if (env.CHECKPOINT_BUCKET) {
    return {
      where: `R2 ${key}`,
      get: async () => (await env.CHECKPOINT_BUCKET.get(key))?.text() ?? null,
      put: (text) => env.CHECKPOINT_BUCKET.put(key, text, { httpMetadata: { contentType: 'application/json' } }),
    };
  }
  throw new Error('no checkpoint store: bind a KV namespace as CHECKPOINT_KV or an R2 bucket as CHECKPOINT_BUCKET');
}

/** The checkpoint: `instant`, the last commit delivered whole (absent: none yet), and
 *  `partial`, how many changes of the commit after it were delivered before a batch failed. */
async function readCheckpoint(store) {
  const text = await store.get();
  if (text === null || text === undefined) return { instant: null, partial: null };
  const c = JSON.parse(text);
  return { instant: c.instant ?? null, partial: c.partial ?? null };
}

function openTable(env) {
  if (!env.TABLE_URL) throw new Error('the TABLE_URL binding is not set');
  // s3:// tables take credentials from the bindings; http(s):// ones need none.
  const s3 = env.S3_ACCESS_KEY_ID && { endpoint: env.S3_ENDPOINT, region: env.S3_REGION ?? 'auto', accessKeyId: env.S3_ACCESS_KEY_ID, secretAccessKey: env.S3_SECRET_ACCESS_KEY, forcePathStyle: env.S3_FORCE_PATH_STYLE === 'true' };
  return HudiTable.open(env.TABLE_URL, s3 ? { s3 } : {});
}

/** The commits to deliver after `since`, oldest first: completed writes, up to (not past) the
 *  first write still in flight — a commit requested earlier may complete later, and its
 *  changes must not be skipped (Hudi's incremental readers block at such holes too). Pending
 *  compaction and clustering plans do not hold it back: they change no record. */
export function commitsToDeliver(timeline, since) {
  const after = timeline.filter((i) => since === null || i.requestedTime > since).sort((a, b) => (a.requestedTime < b.requestedTime ? -1 : 1));
  const out = [];
  for (const i of after) {
    if (i.state !== 'completed') {
      if (WRITES.has(i.requestedAction)) break;
      continue;
    }
    if (WRITES.has(i.action)) out.push(i);
  }
  return out;
}

/** The timeline after `since`: the active one, and the archived one too when the checkpoint
 *  is older than every active instant (the worker did not run for a long while). */
async function timeline(table, since) {
  const active = await table.timeline({ operations: false });
  const oldest = active.find((i) => i.state === 'completed')?.requestedTime;
  return since !== null && oldest !== undefined && since < oldest ? table.timeline({ operations: false, archived: true }) : active;
}

/** A stable order for a commit's changes, so that a partial delivery resumes where it stopped. */
const byContent = (a, b) => {
  const [x, y] = [JSON.stringify(a), JSON.stringify(b)];
  return x < y ? -1 : x > y ? 1 : 0;
};

async function post(env, body, key) {
  const headers = { 'content-type': 'application/json', 'idempotency-key': key };
  if (env.TARGET_AUTHORIZATION) headers.authorization = env.TARGET_AUTHORIZATION;
  try {
    const r = await fetch(env.TARGET_URL, { method: 'POST', headers, body: JSON.stringify(body), signal: AbortSignal.timeout(setting(env, 'TARGET_TIMEOUT_MS', 30000)) });
    await r.body?.cancel();
    return r.ok ? null : `HTTP ${r.status}`;
  } catch (e) {
    return e.message ?? String(e);
  }
}

/** One run: what was delivered, and the failure that stopped it (if any). */
export async function deliver(env) {
  if (!env.TARGET_URL) throw new Error('the TARGET_URL binding is not set');
  const store = checkpointStore(env);
  const batchSize = setting(env, 'BATCH_SIZE', 500);
  const maxCommits = setting(env, 'MAX_COMMITS_PER_RUN', 50);
  const checkpoint = await readCheckpoint(store);
  const table = await openTable(env);
  const report = { checkpoint: checkpoint.instant, commits: 0, batches: 0, changes: 0, failed: null };
  try {
    const commits = commitsToDeliver(await timeline(table, checkpoint.instant), checkpoint.instant).slice(0, maxCommits);
    let since = checkpoint.instant;
    let partial = checkpoint.partial;
    for (const commit of commits) {
      const instant = commit.requestedTime;
      const changes = [];
      // The commit's feed alone: after the commit delivered before it, up to it.
      for await (const c of table.changes({ start: since ?? undefined, end: instant })) changes.push({ op: c.op, instant: c.instant, before: c.before, after: c.after });
      changes.sort(byContent);
      let offset = partial?.instant === instant ? partial.offset : 0;
      while (offset < changes.length) {
        const batch = changes.slice(offset, offset + batchSize);
        const body = { table: table.location, instant, action: commit.action, completionTime: commit.completionTime, offset, total: changes.length, changes: batch };
        const failed = await post(env, body, `${table.location}@${instant}+${offset}`);
        if (failed) {
          report.failed = `${instant} changes ${offset}–${offset + batch.length} of ${changes.length}: ${failed}`;
          return report;
        }
        offset += batch.length;
        report.batches += 1;
        report.changes += batch.length;
        // Delivered: the checkpoint moves (mid-commit, as an offset into its changes).
        const done = offset >= changes.length;
        await store.put(JSON.stringify(done ? { instant, partial: null } : { instant: since, partial: { instant, offset } }));
      }
      if (changes.length === 0) await store.put(JSON.stringify({ instant, partial: null }));
      since = instant;
      partial = null;
      report.checkpoint = instant;
      report.commits += 1;
    }
    return report;
  } finally {
    table.close();
  }
}

export default {
  async scheduled(controller, env) {
    const report = await deliver(env);
    console.log(JSON.stringify({ cron: controller.cron, ...report }));
    // A failed run shows as failed in the Cron Trigger's history; the next run retries.
    if (report.failed) throw new Error(`delivery stopped at ${report.failed}; the checkpoint stays at ${report.checkpoint ?? 'the beginning'}`);
  },

  async fetch(request, env) {
    if (request.method !== 'GET') return new Response('GET\n', { status: 405, headers: { allow: 'GET' } });
    try {
      const checkpoint = await readCheckpoint(checkpointStore(env));
      const table = await openTable(env);
      try {
        const pending = commitsToDeliver(await timeline(table, checkpoint.instant), checkpoint.instant);
        return Response.json({ table: table.location, checkpoint, pending: pending.map((i) => i.requestedTime) });
      } finally {
        table.close();
      }
    } catch (e) {
      return Response.json({ code: e.code ?? 'ERROR', message: e.message ?? String(e) }, { status: 500 });
    }
  },
};
