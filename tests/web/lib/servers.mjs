// Servers for the web and package tests: nginx, moto and the fixture tables come from
// tests/lib (one harness for every JS suite); the latency proxy (benchmarks) is here.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import { join } from 'node:path';

export { cache, freePort, repo } from '../../lib/harness.mjs';
export { MANIFEST, expected, fixtures, generated, unzippedFixtures, writeManifests } from '../../lib/fixtures.mjs';
export { startMoto, startNginx } from '../../lib/servers.mjs';

const CONTENT_TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.css': 'text/css', '.json': 'application/json' };

/** A proxy on 127.0.0.1 that adds `delayMs` before forwarding each request to `target`.
 *  `serve: { prefix, dir }` answers paths under `prefix` from `dir` instead (a page and the
 *  storage on one origin: no CORS in the way). `trace: true` keeps, per request, its method,
 *  url and times (performance.now()): arrived, sent on (after the delay), the target's answer
 *  complete, the answer to the client complete. */
export async function startLatencyProxy(target, delayMs, { serve, trace = false } = {}) {
  const t = new URL(target);
  // Requests forwarded, and the time the target took to answer them (summed).
  const stats = { requests: 0, upstreamMs: 0, trace: [] };
  const server = createServer((req, res) => {
    if (serve && req.url.startsWith(serve.prefix)) {
      const rel = decodeURIComponent(req.url.slice(serve.prefix.length).split('?')[0]) || 'index.html';
      const file = join(serve.dir, rel);
      if (!file.startsWith(serve.dir) || !existsSync(file) || statSync(file).isDirectory()) return res.writeHead(404).end();
      res.writeHead(200, { 'content-type': CONTENT_TYPES[file.slice(file.lastIndexOf('.'))] ?? 'application/octet-stream' });
      return res.end(readFileSync(file));
    }
    stats.requests += 1;
    const entry = trace ? { method: req.method, url: req.url, arrived: performance.now() } : null;
    if (entry) stats.trace.push(entry);
    setTimeout(() => {
      const sent = performance.now();
      if (entry) entry.sent = sent;
      const up = httpRequest(
        { host: t.hostname, port: t.port, path: req.url, method: req.method, headers: req.headers },
        (r) => {
          res.writeHead(r.statusCode ?? 502, r.headers);
          r.on('end', () => {
            const now = performance.now();
            stats.upstreamMs += now - sent;
            if (entry) entry.answered = now;
          });
          if (entry) res.on('finish', () => (entry.done = performance.now()));
          r.pipe(res);
        },
      );
      up.on('error', () => res.destroy());
      req.pipe(up);
    }, delayMs);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address();
  return { url: `http://127.0.0.1:${port}`, stats, stop: () => new Promise((r) => server.close(r)) };
}
