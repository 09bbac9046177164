// A proxy on loopback in front of moto's S3 that misbehaves as real stores and networks do,
// one fault at a time (`proxy.fault = …`):
//   'none'        pass-through
//   'lost5xx'     every third request answers 503 without reaching the store
//   'applied5xx'  every third PUT reaches the store, then answers 500 (the write happened)
//   'spurious412' the first conditional PUT (If-None-Match / If-Match) of every other key
//                 answers 412 without reaching the store
//   'stale'       an acknowledged PUT stays invisible for `staleMs`: GET / HEAD answer 404
//                 and listings leave it out
//   'reorder'     every ListObjectsV2 page comes with its keys in reverse order
//   'truncate'    a listing's last page loses its last key, once per distinct listing
// Also a gate: `proxy.hold(matches)` holds the first request `matches(req)` picks until the
// test calls the returned `release()` (a writer paused at a chosen request while a peer acts).
// The S3 requests are signed by the client and forwarded unchanged.
import { createServer, request as httpRequest } from 'node:http';

const LIST = /[?&]list-type=2/;

export async function startFaultProxy(target) {
  const upstream = new URL(target);
  const me = { fault: 'none', staleMs: 1500, log: [] };
  let count = 0;
  let puts = 0;
  let conditional = 0;
  const hidden = new Map(); // key → visible again at (ms)
  const truncated = new Set();
  const refusedOnce = new Set();
  let gate = null;

  const isHidden = (key) => {
    const until = hidden.get(key);
    if (until === undefined) return false;
    if (Date.now() < until) return true;
    hidden.delete(key);
    return false;
  };

  const forward = (req, body, onAnswer) => {
    const up = httpRequest(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
      (r) => {
        const chunks = [];
        r.on('data', (c) => chunks.push(c));
        r.on('end', () => onAnswer(r, Buffer.concat(chunks)));
      },
    );
    up.on('error', (e) => onAnswer(null, Buffer.from(String(e))));
    up.end(body);
  };

  const reply = (res, status, headers, body, head = false) => {
    const h = { ...headers };
    delete h['transfer-encoding'];
    // A HEAD's Content-Length is the object's, not the (empty) body's.
    if (!head) h['content-length'] = String(body.length);
    res.writeHead(status, h);
    res.end(body);
  };

  const s3Error = (res, status, code) =>
    reply(res, status, { 'content-type': 'application/xml' }, Buffer.from(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${code} (fault proxy)</Message></Error>`));

  const handle = (req, res, body) => {
    const url = new URL(req.url, 'http://x');
    const key = decodeURIComponent(url.pathname).replace(/^\/[^/]+\//, '');
    const isList = LIST.test(req.url);
    const entry = { method: req.method, key, list: isList, status: 0, fault: null, at: Date.now(), prefix: url.searchParams.get('prefix') };
    me.log.push(entry);
    count += 1;
    const conditionalPut = req.method === 'PUT' && (req.headers['if-none-match'] || req.headers['if-match']);
    if (me.fault === 'lost5xx' && count % 3 === 0) {
      entry.fault = 'lost5xx';
      entry.status = 503;
      return s3Error(res, 503, 'SlowDown');
    }
    if (me.fault === 'spurious412' && conditionalPut && !refusedOnce.has(key) && ++conditional % 2 === 1) {
      refusedOnce.add(key);
      entry.fault = 'spurious412';
      entry.status = 412;
      return s3Error(res, 412, 'PreconditionFailed');
    }
    if (me.fault === 'stale' && (req.method === 'GET' || req.method === 'HEAD') && !isList && isHidden(key)) {
      entry.fault = 'stale';
      entry.status = 404;
      return s3Error(res, 404, 'NoSuchKey');
    }
    forward(req, body, (r, answer) => {
      if (!r) {
        entry.status = 502;
        return s3Error(res, 502, 'BadGateway');
      }
      entry.status = r.statusCode;
      if (req.method === 'PUT' && r.statusCode === 200) {
        puts += 1;
        if (me.fault === 'stale') hidden.set(key, Date.now() + me.staleMs);
        if (me.fault === 'applied5xx' && puts % 3 === 0) {
          entry.fault = 'applied5xx';
          entry.status = 500;
          return s3Error(res, 500, 'InternalError');
        }
      }
      if (isList && r.statusCode === 200) {
        const text = answer.toString('utf8');
        const contents = text.match(/<Contents>[\s\S]*?<\/Contents>/g) ?? [];
        let kept = contents;
        if (me.fault === 'stale') {
          kept = contents.filter((c) => !isHidden(decodeXml(c.match(/<Key>([\s\S]*?)<\/Key>/)[1])));
        } else if (me.fault === 'reorder') {
          kept = [...contents].reverse();
        } else if (me.fault === 'truncate' && contents.length > 0 && !/<IsTruncated>true/.test(text)) {
          const which = `${url.searchParams.get('prefix')}|${url.searchParams.get('start-after')}`;
          if (!truncated.has(which)) {
            truncated.add(which);
            kept = contents.slice(0, -1);
          }
        }
        const changed = kept.length !== contents.length || (me.fault === 'reorder' && contents.length > 1);
        if (changed) {
          entry.fault = me.fault;
          const first = text.indexOf('<Contents>');
          const last = text.lastIndexOf('</Contents>') + '</Contents>'.length;
          const rewritten = text.slice(0, first) + kept.join('') + text.slice(last);
          return reply(res, 200, r.headers, Buffer.from(rewritten.replace(/<KeyCount>\d+<\/KeyCount>/, `<KeyCount>${kept.length}</KeyCount>`)));
        }
      }
      reply(res, r.statusCode, r.headers, answer, req.method === 'HEAD');
    });
  };

  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (gate && gate.matches(req)) {
        const g = gate;
        gate = null;
        g.hit(req);
        g.released.then(() => handle(req, res, body));
        return;
      }
      handle(req, res, body);
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  me.url = `http://127.0.0.1:${server.address().port}`;
  me.reset = () => {
    me.fault = 'none';
    me.log = [];
    count = puts = conditional = 0;
    hidden.clear();
    truncated.clear();
    refusedOnce.clear();
  };
  /** Holds the first request `matches` picks; answers { reached, release }. */
  me.hold = (matches) => {
    let release;
    let hit;
    const released = new Promise((r) => (release = r));
    const reached = new Promise((r) => (hit = r));
    gate = { matches, released, hit };
    return { reached, release };
  };
  me.stop = () => new Promise((r) => server.close(r));
  return me;
}

const decodeXml = (s) => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, '&');
