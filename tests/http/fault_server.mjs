// A small HTTP server on loopback that serves table folders with Range support, and breaks
// on purpose. The first path segment picks the behaviour:
//   /ok/...         plain (with a JSON directory index like nginx's, dot-files hidden)
//   /flaky/...      503 twice for each (path, range), then the answer
//   /norange/...    ignores Range: 200 with the whole body
//   /cut/...        the first answer for each (path, range) of a data file stops mid-body
//   /forbidden/...  403 for data files (Parquet and log files)
//   /slow/...       data files are held until the client gives up or the test calls
//                   releaseSlow() (a gate the test opens, no timer)
//   /long206/...    ranges of data files answer 206 with a body longer than asked
//   /endless/...    data files ignore Range and stream 40 MiB without a Content-Length
//   /redirect/...   data files answer 302 to `redirectTo` + `/ok/<path>` (set on the server)
//   /fanout/...     every directory index also lists 20 sub-directories, without end
//   /nomanifest/... plain, but the table's listing manifest is not there (404)
//   /s3?list-type=2 ListObjectsV2 over the tree in pages of 3 keys (so every listing of a
//                   table takes several pages); /s3/... objects, plain
//   /expiring/...   plain, but a URL carrying `expired=401` or `expired=403` is refused
//                   with that status (a presigned URL that expired)
//   /throttle/...   the first request for each (path, range) of a data file answers 429
//                   with `Retry-After: 1`
// Every request is logged (method, path, range, status) for the request-log test.
import { createServer } from 'node:http';
import { open, stat, readdir } from 'node:fs/promises';
import { join, normalize } from 'node:path';

const S3_PAGE = 3;
const isData = (p) => /\.parquet$|\.log\.\d+_/.test(p);

export async function startFaultServer(root) {
  const log = [];
  // Tests wait for server-side events (a request arrived, a client hung up), never for time.
  const waiters = [];
  const changed = () => {
    for (const w of waiters.splice(0)) if (!w.check()) waiters.push(w);
  };
  let releaseHeld = null;
  let held = new Promise((r) => (releaseHeld = r));
  const seen = new Map();
  const open_ = new Set();
  const me = { redirectTo: null, maxInFlight: 0 };
  let inFlight = 0;
  const server = createServer(async (req, res) => {
    const url = new URL(req.url, 'http://x');
    const [, mode, ...rest] = decodeURIComponent(url.pathname).split('/');
    const rel = normalize(rest.join('/')).replace(/^(\.\.(\/|$))+/, '');
    const range = req.headers.range;
    const entry = { method: req.method, mode, path: rel, query: url.search, range: range ?? null, status: 0, aborted: false, at: Date.now() };
    log.push(entry);
    inFlight += 1;
    me.maxInFlight = Math.max(me.maxInFlight, inFlight);
    res.once('close', () => (inFlight -= 1));
    changed();
    const key = `${req.method} ${rel} ${range}`;
    const n = (seen.get(key) ?? 0) + 1;
    seen.set(key, n);
    const send = (status, headers = {}, body) => {
      entry.status = status;
      res.writeHead(status, headers);
      res.end(body);
    };
    req.on('close', () => {
      if (!res.writableEnded) entry.aborted = true;
      changed();
    });
    res.on('finish', changed);
    try {
      if (mode === 'flaky' && n <= 2) return send(503, { 'retry-after': '0' }, 'try again');
      if (mode === 'throttle' && isData(rel) && n === 1) return send(429, { 'retry-after': '1' }, 'slow down');
      const expired = url.searchParams.get('expired');
      if (mode === 'expiring' && expired) {
        return send(Number(expired), { 'content-type': 'application/xml' }, '<Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>');
      }
      if (mode === 'nomanifest' && rel.endsWith('.hoodie/hudi-edge-manifest.json')) return send(404, {}, 'not found');
      if (mode === 's3' && url.searchParams.get('list-type') === '2') {
        return send(200, { 'content-type': 'application/xml' }, await listObjectsV2(root, url.searchParams));
      }
      if (mode === 'forbidden' && isData(rel)) {
        return send(403, { 'content-type': 'application/xml' }, '<Error><Code>AccessDenied</Code><Message>token s3cr3t-token rejected</Message></Error>');
      }
      if (mode === 'slow' && isData(rel)) {
        await Promise.race([held, new Promise((r) => req.on('close', r))]);
        if (res.destroyed || req.destroyed) {
          entry.aborted = true;
          return;
        }
      }
      if (mode === 'redirect' && isData(rel)) {
        return send(302, { location: `${me.redirectTo}/ok/${rel}?sig=s3cr3t-token`, 'content-length': '0' });
      }
      if (mode === 'endless' && isData(rel) && range) {
        entry.status = 200;
        res.writeHead(200, {});
        const chunk = Buffer.alloc(1 << 20);
        const closed = new Promise((r) => res.once('close', r));
        for (let i = 0; i < 40 && !res.destroyed; i++) {
          if (!res.write(chunk)) await Promise.race([new Promise((r) => res.once('drain', r)), closed]);
        }
        return res.end();
      }
      const full = join(root, rel);
      // Partition folders (not the timeline) hold 20 more folders each, without end.
      const fanout = mode === 'fanout' && url.pathname.endsWith('/') && !rel.includes('.hoodie');
      const fakeDirs = fanout ? Array.from({ length: 20 }, (_, i) => ({ name: `d${i}`, type: 'directory' })) : [];
      let st;
      try {
        st = await stat(full);
        if (mode === 'expiring' && st.isDirectory()) throw new Error('S3 has no directories');
      } catch {
        if (fanout) return send(200, { 'content-type': 'application/json' }, JSON.stringify(fakeDirs));
        return send(404, {}, 'not found');
      }
      if (st.isDirectory()) {
        const entries = await readdir(full, { withFileTypes: true });
        const json = [];
        for (const e of entries) {
          if (e.name.startsWith('.')) continue; // like nginx
          const s = await stat(join(full, e.name));
          json.push(e.isDirectory() ? { name: e.name, type: 'directory', mtime: s.mtime.toUTCString() } : { name: e.name, type: 'file', mtime: s.mtime.toUTCString(), size: s.size });
        }
        return send(200, { 'content-type': 'application/json' }, JSON.stringify(json.concat(fakeDirs)));
      }
      let start = 0;
      let end = st.size; // exclusive
      let status = 200;
      const m = mode !== 'norange' && range && /^bytes=(\d*)-(\d*)$/.exec(range);
      if (m) {
        if (m[1] === '') {
          start = Math.max(0, st.size - Number(m[2]));
        } else {
          start = Number(m[1]);
          end = m[2] === '' ? st.size : Math.min(st.size, Number(m[2]) + 1);
        }
        if (start >= st.size) return send(416, { 'content-range': `bytes */${st.size}` });
        status = 206;
        if (mode === 'long206' && isData(rel)) end = st.size;
      }
      const headers = { 'content-length': String(end - start), 'accept-ranges': 'bytes', etag: `"${st.size}-${st.mtimeMs}"` };
      if (status === 206) headers['content-range'] = `bytes ${start}-${end - 1}/${st.size}`;
      const fh = await open(full);
      const buf = Buffer.alloc(end - start);
      await fh.read(buf, 0, buf.length, start);
      await fh.close();
      entry.status = status;
      if (req.method === 'HEAD') {
        res.writeHead(status, headers);
        return res.end();
      }
      if (mode === 'cut' && isData(rel) && n === 1 && buf.length > 16) {
        res.writeHead(status, headers);
        res.write(buf.subarray(0, buf.length >> 1));
        entry.status = -status; // cut
        return setTimeout(() => res.socket?.destroy(), 20);
      }
      res.writeHead(status, headers);
      res.end(buf);
    } catch (e) {
      if (!res.headersSent) send(500, {}, String(e));
    }
  });
  server.on('connection', (s) => {
    open_.add(s);
    s.on('close', () => open_.delete(s));
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${server.address().port}`;
  return Object.assign(me, {
    url,
    log,
    reset() {
      log.length = 0;
      seen.clear();
      me.maxInFlight = inFlight;
      held = new Promise((r) => (releaseHeld = r));
    },
    /** Lets the held /slow/ requests answer. */
    releaseSlow() {
      releaseHeld();
    },
    /** Resolves once `predicate(log)` holds (checked whenever a request arrives or ends). */
    until(predicate) {
      return new Promise((resolve) => {
        const w = { check: () => predicate(log) && (resolve(), true) };
        if (!w.check()) waiters.push(w);
      });
    },
    async stop() {
      for (const s of open_) s.destroy();
      await new Promise((r) => server.close(r));
    },
  });
}

// One page of a ListObjectsV2 answer over the files under `root` (dot-files included, as S3
// holds them): keys under `prefix` after `start-after`, folded at `delimiter`, S3_PAGE
// entries a page, the continuation token the index of the next entry.
async function listObjectsV2(root, q) {
  const prefix = q.get('prefix') ?? '';
  const delimiter = q.get('delimiter');
  const base = prefix.slice(0, prefix.lastIndexOf('/') + 1);
  const files = [];
  const walk = async (dir) => {
    let entries;
    try {
      entries = await readdir(join(root, dir), { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const key = `${dir}${e.name}`;
      if (e.isDirectory()) await walk(`${key}/`);
      else if (key.startsWith(prefix)) {
        const st = await stat(join(root, key));
        files.push({ key, size: st.size, mtimeMs: st.mtimeMs, mtime: st.mtime });
      }
    }
  };
  await walk(base);
  const entries = new Map();
  for (const f of files) {
    const cut = delimiter ? f.key.indexOf(delimiter, prefix.length) : -1;
    if (cut < 0) entries.set(f.key, f);
    else entries.set(f.key.slice(0, cut + 1), null);
  }
  const startAfter = q.get('start-after') ?? '';
  const all = [...entries.keys()].sort().filter((k) => k > startAfter);
  const from = Number(q.get('continuation-token') ?? 0);
  const page = all.slice(from, from + S3_PAGE);
  const more = from + S3_PAGE < all.length;
  const esc = (s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  const items = page.map((k) => {
    const f = entries.get(k);
    return f
      ? `<Contents><Key>${esc(k)}</Key><LastModified>${f.mtime.toISOString()}</LastModified><ETag>"${f.size}-${f.mtimeMs}"</ETag><Size>${f.size}</Size></Contents>`
      : `<CommonPrefixes><Prefix>${esc(k)}</Prefix></CommonPrefixes>`;
  });
  return `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult><Name>s3</Name><Prefix>${esc(prefix)}</Prefix><KeyCount>${page.length}</KeyCount><MaxKeys>${S3_PAGE}</MaxKeys><IsTruncated>${more}</IsTruncated>${more ? `<NextContinuationToken>${from + S3_PAGE}</NextContinuationToken>` : ''}${items.join('')}</ListBucketResult>`;
}
