// edge-ingest: a Cloudflare Workers / workerd `fetch` handler that commits JSON rows to a Hudi
// table on S3-compatible storage (R2, S3, MinIO) with the hudi-edge package.
//
//   POST /        body: [{...row}, ...] or {"rows": [...], "operation": "upsert"|"insert"|"delete"}
//                 → 200 with the commit: {instant, completionTime, action, operation, inserted,
//                   updated, deleted, filesWritten, io, ...}
//   GET /         → 200 with the latest writes, newest first (?limit=N, default 10; compactions left out)
//   HEAD /        → 204 once the engine's wasm module is instantiated (a warm-up / health check)
//   scheduled     (a Cron Trigger) the table services: clean, compact (Merge-On-Read),
//                 cluster (small file groups rewritten into large ones), archive
//
// Errors answer {code, message, row?, column?, instant?} with a status by code (below); a body
// over MAX_BODY_BYTES (default 4 MiB) is refused with 413 before it is read whole.
// Configuration comes from the worker's bindings (vars and secrets), see README.md.
import { HudiTable, MetadataCache, initWasm } from 'hudi-edge';

const STATUS_BY_CODE = {
  INVALID_INPUT: 400,
  INVALID_ARGUMENT: 400,
  ACCESS_DENIED: 403,
  NOT_FOUND: 404,
  READ_ONLY: 405,
  CONFLICT: 409,
  UNSUPPORTED: 422,
  ABORTED: 499,
};
const OPERATIONS = new Set(['upsert', 'insert', 'delete']);

// Metadata-table files (record-index HFile blocks, MDT log files) kept across the requests
// this isolate serves: each request opens the table again, and reads from here what earlier
// requests read or wrote, as long as the table's listing shows those files unchanged (same
// size and ETag). At most MDT_CACHE_BYTES (default 16 MiB; 0 turns it off), least recently
// used first out. Made on the first request (bindings are not visible at module level).
let mdtCache;

function metadataCache(env) {
  if (mdtCache === undefined) {
    const raw = env.MDT_CACHE_BYTES ?? String(16 * 1024 * 1024);
    const maxBytes = Number(raw);
    if (!Number.isSafeInteger(maxBytes) || maxBytes < 0) throw Object.assign(new Error(`the MDT_CACHE_BYTES binding must be a non-negative integer, got ${JSON.stringify(raw)}`), { code: 'INVALID_ARGUMENT' });
    mdtCache = maxBytes > 0 ? new MetadataCache({ maxBytes }) : null;
  }
  return mdtCache ?? undefined;
}

function storageOptions(env, signal) {
  return {
    signal,
    s3: {
      endpoint: env.S3_ENDPOINT,
      region: env.S3_REGION ?? 'auto',
      accessKeyId: env.S3_ACCESS_KEY_ID,
      secretAccessKey: env.S3_SECRET_ACCESS_KEY,
      forcePathStyle: env.S3_FORCE_PATH_STYLE === 'true',
    },
    // Storage requests in flight at most. A commit's data and metadata-table log files go
    // out in one round (one per touched file group: ~70 for 100 rows spread over a big
    // table), so the more in flight the fewer round trips it costs. Cloudflare Workers
    // open at most 6 connections at once per request and queue the rest themselves, so a
    // higher bound costs nothing there and helps wherever the runtime allows more.
    concurrency: concurrency(env.S3_CONCURRENCY || '64'),
  };
}

function openTable(env, signal) {
  if (!env.TABLE_URL) throw Object.assign(new Error('the TABLE_URL binding is not set'), { code: 'INVALID_ARGUMENT' });
  const cache = metadataCache(env);
  return HudiTable.open(env.TABLE_URL, { ...storageOptions(env, signal), ...(cache ? { cache } : {}) });
}

// After its answer (ctx.waitUntil) a POST runs the table services its write left
// (deferServices: a metadata-table compaction that came due, cleaning, archival, inline
// compaction and clustering, each when due), then refreshes its table handle (the latest
// timeline, schema and metadata-table listings) and keeps it for a later POST this isolate
// serves. That POST starts with its write's first round instead of two rounds of opening,
// and answers at its commit point. As one writer (SINGLE_WRITER=true) a POST first waits for
// the work after earlier answers: writes stay one at a time, services included. With several
// writers (the storage lock orders them) it does not wait: it takes the kept handle when one
// is ready, else opens its own. The write lists the timeline anyway: a commit by anyone else
// since the refresh is seen there, and the write redoes its reads on the table as it is.
// KEEP_TABLE_WARM=false: each POST opens its own handle, runs the services before answering
// and closes it.
let warmTable;
// How many POSTs' work after their answers is still running. A POST waiting for it polls:
// workerd cancels a request as hung when all it waits for is a promise another request
// settles, and a continuation on a promise whose request has ended does not run.
let afterAnswersRunning = 0;

async function afterAnswersSettled() {
  while (afterAnswersRunning > 0) await new Promise((resolve) => setTimeout(resolve, 10));
}

const keepsTableWarm = (env, ctx) => env.KEEP_TABLE_WARM !== 'false' && typeof ctx?.waitUntil === 'function';

/** The kept handle (undefined when there is none ready), as one writer once the work after
 *  earlier answers has settled. */
async function takeWarmTable(env) {
  if (env.SINGLE_WRITER === 'true') await afterAnswersSettled();
  const kept = warmTable;
  warmTable = undefined;
  return kept;
}

/** The work after a POST's answer: its write's services, then `table` refreshed and kept for
 *  a later POST (closed instead when another handle is kept already, or on a failure). */
function afterAnswer(table, env, ctx) {
  afterAnswersRunning += 1;
  const work = (async () => {
    let keep = false;
    try {
      const done = await table.runServices({ options: writeConfigs(env) });
      const ran = Object.entries({ metadataTableCompaction: done.metadataTableCompaction, cleans: done.cleans.length ? done.cleans : null, archival: done.archival, compaction: done.compaction, clustering: done.clustering }).filter(([, v]) => v);
      if (ran.length) console.log(JSON.stringify({ servicesAfterPost: Object.fromEntries(ran) }));
      for (const e of done.serviceErrors) console.error(`${e.service} after a POST failed (${e.code}): ${e.message}`);
      if (warmTable) return;
      await table.refresh({ forWrite: true });
      if (warmTable) return;
      warmTable = table;
      keep = true;
    } catch (e) {
      console.error(`after a POST (${e.code ?? 'IO'}): ${e.message}`);
    } finally {
      if (!keep) table.close();
      afterAnswersRunning -= 1;
    }
  })();
  ctx.waitUntil(work);
}

/** The table to write to: opened, or — when there is none and the TABLE_SPEC binding says what
 *  it is — created. Of requests creating it at once one creates it; the others open it. */
async function openOrCreateTable(env, signal) {
  try {
    return await openTable(env, signal);
  } catch (e) {
    const spec = tableSpec(env);
    if (e?.code !== 'NOT_FOUND' || !spec) throw e;
    try {
      return await HudiTable.create(env.TABLE_URL, spec, storageOptions(env, signal));
    } catch (c) {
      if (c?.code === 'CONFLICT') return openTable(env, signal);
      throw c;
    }
  }
}

/** The new table's spec from the TABLE_SPEC binding (the package's NewTableSpec as JSON), or
 *  undefined when unset. */
function tableSpec(env) {
  if (!env.TABLE_SPEC) return undefined;
  try {
    return JSON.parse(env.TABLE_SPEC);
  } catch (e) {
    throw Object.assign(new Error(`the TABLE_SPEC binding is not JSON: ${e.message}`), { code: 'INVALID_ARGUMENT' });
  }
}

function concurrency(value) {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw Object.assign(new Error(`the S3_CONCURRENCY binding must be a positive integer, got ${JSON.stringify(value)}`), { code: 'INVALID_ARGUMENT' });
  return n;
}

// A worker serves requests at once, so by default its writes coordinate as Hudi's several
// writers do (optimistic concurrency under the table's storage lock, failed writes cleaned
// lazily by heartbeat). As a single writer, one request's write would roll back another's
// write in progress as a failed one, and that other, committing anyway, would leave a table
// whose commit names deleted files. SINGLE_WRITER=true is for writes funnelled through one
// Durable Object or queue consumer.
const SEVERAL_WRITERS = {
  'hoodie.write.concurrency.mode': 'optimistic_concurrency_control',
  'hoodie.write.lock.provider': 'org.apache.hudi.client.transaction.lock.StorageBasedLockProvider',
  'hoodie.cleaner.policy.failed.writes': 'LAZY',
};

/** Hudi write configs: SEVERAL_WRITERS (unless SINGLE_WRITER is `true`) and, over them, the
 *  HUDI_WRITE_OPTIONS binding (a JSON object of `hoodie.*` strings). */
function writeConfigs(env) {
  const defaults = env.SINGLE_WRITER === 'true' ? {} : SEVERAL_WRITERS;
  if (!env.HUDI_WRITE_OPTIONS) return defaults;
  let o;
  try {
    o = JSON.parse(env.HUDI_WRITE_OPTIONS);
  } catch (e) {
    throw Object.assign(new Error(`the HUDI_WRITE_OPTIONS binding is not JSON: ${e.message}`), { code: 'INVALID_ARGUMENT' });
  }
  if (!o || typeof o !== 'object' || Array.isArray(o) || Object.values(o).some((v) => typeof v !== 'string')) {
    throw Object.assign(new Error('the HUDI_WRITE_OPTIONS binding must be a JSON object of strings'), { code: 'INVALID_ARGUMENT' });
  }
  return { ...defaults, ...o };
}

function failure(code, message, extra = {}, status = STATUS_BY_CODE[code] ?? 500) {
  return Response.json({ code, message, ...extra }, { status });
}

// A body is read whole and parsed into JS objects several times its size, beside the engine's
// own memory: 4 MiB keeps a write well inside a 128 MB isolate.
const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;

function tooLarge(size, maxBytes) {
  return failure('INVALID_INPUT', `the body is ${size} bytes; at most ${maxBytes} (MAX_BODY_BYTES)`, {}, 413);
}

/** The body as text, read no further than `maxBytes`: a declared length over it is refused
 *  before reading, a streamed one once it passes it. */
async function bodyText(request, maxBytes) {
  const declared = Number(request.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) return tooLarge(declared, maxBytes);
  if (!request.body) return '';
  const reader = request.body.getReader();
  const chunks = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      return tooLarge(`over ${maxBytes}`, maxBytes);
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.byteLength;
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return failure('INVALID_INPUT', 'the body is not UTF-8 text');
  }
}

/** The rows of a POST body, or a Response saying why not. Nothing is opened or written for
 *  a body refused here. */
async function readBody(request, maxRows, maxBytes) {
  const text = await bodyText(request, maxBytes);
  if (text instanceof Response) return text;
  let body;
  try {
    body = JSON.parse(text);
  } catch (e) {
    return failure('INVALID_INPUT', `the body is not JSON: ${e.message}`);
  }
  const rows = Array.isArray(body) ? body : body?.rows;
  const operation = (Array.isArray(body) ? undefined : body?.operation) ?? 'upsert';
  if (!Array.isArray(rows) || rows.length === 0) return failure('INVALID_INPUT', 'expected a non-empty array of rows (or {"rows": [...]})');
  if (!OPERATIONS.has(operation)) return failure('INVALID_ARGUMENT', `unknown operation ${JSON.stringify(operation)} (upsert, insert or delete)`);
  if (rows.length > maxRows) return failure('INVALID_INPUT', `${rows.length} rows in one request; at most ${maxRows} (MAX_ROWS)`);
  return { rows, operation };
}

async function latestCommits(table, limit) {
  const instants = await table.timeline({ operations: false });
  const candidates = instants.filter((i) => i.state === 'completed' && (i.action === 'commit' || i.action === 'deltacommit')).reverse();
  const writes = [];
  // A Merge-On-Read compaction completes as a `commit` too: its metadata says COMPACT.
  for (let at = 0; at < candidates.length && writes.length < limit; at += limit) {
    const batch = candidates.slice(at, at + limit);
    const details = await Promise.all(batch.map((i) => table.commit(i.requestedTime)));
    batch.forEach((i, k) => {
      const d = details[k];
      if (d.operation === 'COMPACT' || writes.length >= limit) return;
      writes.push({
        instant: i.requestedTime,
        completionTime: i.completionTime,
        action: i.action,
        // Lower case, as POST takes and answers it (commit metadata spells it `UPSERT`).
        operation: d.operation?.toLowerCase() ?? null,
        inserted: d.inserted,
        updated: d.updated,
        deleted: d.deleted,
        files: d.files.length,
      });
    });
  }
  return writes;
}

/** The table services Hudi's writers run after their commits — cleaning, Merge-On-Read
 *  compaction, clustering of small file groups, archival — run on a schedule: a worker whose writes leave them off
 *  (HUDI_WRITE_OPTIONS with hoodie.clean.automatic, hoodie.compact.inline and
 *  hoodie.archive.automatic false) keeps each POST short and the table healthy all the same.
 *  Each service is safe to cut at any request: the next run finishes it. */
async function tableServices(env, signal) {
  const table = await openTable(env, signal);
  try {
    const options = writeConfigs(env);
    const done = { cleans: await table.clean({ options, signal }) };
    if (typeof table.compact === 'function' && (await table.info()).type === 'MERGE_ON_READ') {
      done.compaction = await table.compact({ options, signal });
    }
    // Small file groups the ingest's many small commits leave (a plan only when there are).
    done.clustering = await table.cluster({ options, signal });
    done.archival = await table.archive({ options, signal });
    return done;
  } finally {
    table.close();
  }
}

export default {
  async scheduled(controller, env, ctx) {
    ctx.waitUntil(
      tableServices(env).then(
        (done) => console.log(JSON.stringify({ cron: controller.cron, ...done })),
        (e) => console.error(`table services failed (${e.code ?? 'IO'}): ${e.message}`),
      ),
    );
  },

  async fetch(request, env, ctx) {
    const url = new URL(request.url);
    if (request.method === 'HEAD') {
      await initWasm();
      return new Response(null, { status: 204 });
    }
    if (request.method !== 'GET' && request.method !== 'POST') {
      return new Response('GET or POST\n', { status: 405, headers: { allow: 'GET, HEAD, POST' } });
    }
    let input;
    if (request.method === 'POST') {
      input = await readBody(request, Number(env.MAX_ROWS ?? 10000), Number(env.MAX_BODY_BYTES ?? DEFAULT_MAX_BODY_BYTES));
      if (input instanceof Response) return input;
    }
    let table;
    let kept = false;
    const warm = request.method === 'POST' && keepsTableWarm(env, ctx);
    try {
      if (warm) table = await takeWarmTable(env);
      table ??= request.method === 'GET' ? await openTable(env, request.signal) : await openOrCreateTable(env, request.signal);
      if (request.method === 'GET') {
        const limit = Math.max(1, Math.min(100, Number(url.searchParams.get('limit') ?? 10) || 10));
        return Response.json(await latestCommits(table, limit));
      }
      // The client going away aborts the write (with the enable_request_signal flag): before
      // the commit point nothing is visible and the instant is rolled back; after it the
      // commit stands.
      const options = { signal: request.signal, commitRetries: Number(env.COMMIT_RETRIES ?? 3), options: writeConfigs(env), deferServices: warm };
      const result = input.operation === 'delete' ? await table.delete(input.rows, options) : await table[input.operation](input.rows, options);
      // A handle whose write failed is not kept: what it holds may be what failed.
      if (warm) {
        afterAnswer(table, env, ctx);
        kept = true;
      }
      // What the metadata cache holds and saved so far in this isolate (absent when off).
      return Response.json({ ...result, metadataCache: mdtCache?.stats() });
    } catch (e) {
      return failure(e.code ?? 'IO', e.message ?? String(e), { row: e.row, column: e.column, instant: e.instant });
    } finally {
      if (!kept) table?.close();
    }
  },
};
