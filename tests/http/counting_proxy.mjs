// A pass-through HTTP proxy on loopback in front of a real server (nginx, moto): every request
// is counted and logged on the server side (method, path, range, status) with the most
// requests it ever had in flight at once, so tests bound what a client really sent instead
// of trusting the engine's own io() counters.
import { createServer, request as httpRequest } from 'node:http';

export async function startCountingProxy(target) {
  const upstream = new URL(target);
  const log = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const sockets = new Set();
  const server = createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    const entry = { method: req.method, path: decodeURIComponent(url.pathname), query: url.search, range: req.headers.range ?? null, headers: req.headers, status: 0 };
    log.push(entry);
    inFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    let done = false;
    const finish = () => {
      if (!done) {
        done = true;
        inFlight -= 1;
      }
    };
    res.on('close', finish);
    const forward = httpRequest(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
      (up) => {
        entry.status = up.statusCode;
        res.writeHead(up.statusCode, up.headers);
        up.pipe(res);
      },
    );
    forward.on('error', (e) => {
      entry.status = 502;
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`proxy: ${e.message}`);
    });
    req.pipe(forward);
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    log,
    get maxInFlight() {
      return maxInFlight;
    },
    /** Requests seen since the last reset whose path contains `part` (all without). */
    count(part = '') {
      return log.filter((e) => e.path.includes(part)).length;
    },
    reset() {
      log.length = 0;
      maxInFlight = inFlight;
    },
    async stop() {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}
