// The real servers every JS test uses, on 127.0.0.1 only, each on a port of its own, killed
// when the test process ends: nginx (Debian's, private config) and moto's S3 server (PyPI,
// the project venv). What differs between suites — mounts, listings, compression — is a
// parameter.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { NGINX, cache, freePort, launch, removeTemp, repo, requireBinary, tempDir, waitFor } from './harness.mjs';
import { fixtureNames } from './fixtures.mjs';

const execFileAsync = promisify(execFile);
// Debian's libnginx-mod-http-brotli-static (.ci/setup).
const BROTLI_STATIC = '/usr/lib/nginx/modules/ngx_http_brotli_static_module.so';

/**
 * nginx on 127.0.0.1 serving `mounts` ({ '/tables/': dir, '/': dir, '=/a/file': file }) with
 * byte ranges, CORS and JSON directory listings (nginx's autoindex, which hides dot-files;
 * under '/' an index.html is served first). With a '/tables/' mount also:
 *   /slow/X       the /tables/ tree at `slowRate` bytes/s (abort and progress tests)
 *   /partial/X    the /tables/ tree, but data files (.parquet, .log.N) answer 403
 * and always /denied/... answering 403. `gzip` compresses JS, wasm, CSS and JSON answers;
 * `precompressed` serves a file's `.gz` (and, with Debian's brotli module installed, `.br`)
 * beside it instead, as a static host with compressed assets does.
 * `maxMs`: killed after that long (default: lives as long as the test process).
 * Returns { url, port, dir, accessLog() (lines so far), log(), stop() }.
 */
export async function startNginx({ mounts = {}, slowRate = '64k', port: wanted, gzip = true, precompressed = false, maxMs = null } = {}) {
  const dir = tempDir('nginx');
  for (const d of ['body', 'proxy', 'fcgi', 'uwsgi', 'scgi']) mkdirSync(join(dir, d));
  const port = wanted ?? (await freePort());
  const tables = mounts['/tables/'];
  const listing = 'autoindex on; autoindex_format json;';
  const locations = Object.entries(mounts)
    .sort((a, b) => b[0].length - a[0].length)
    .map(([prefix, path]) =>
      prefix === '/'
        ? `location / { root ${path}; try_files $uri $uri/index.html $uri/ =404; ${listing} }`
        : prefix.startsWith('=')
          ? `location = ${prefix.slice(1)} { alias ${path}; }`
          : `location ${prefix} { alias ${path.replace(/\/?$/, '/')}; ${listing} }`,
    );
  if (tables) {
    locations.push(`location /slow/ { alias ${tables.replace(/\/?$/, '/')}; ${listing} limit_rate ${slowRate}; }`);
    locations.push(`location ~ ^/partial/.*(\\.parquet|\\.log\\.[0-9][^/]*)$ { return 403; }`);
    locations.push(`location /partial/ { alias ${tables.replace(/\/?$/, '/')}; ${listing} }`);
  }
  locations.push('location /denied/ { return 403; }');
  const brotli = precompressed && existsSync(BROTLI_STATIC);
  const conf = `
${brotli ? `load_module ${BROTLI_STATIC};` : ''}
${process.getuid?.() === 0 ? 'user root;' : ''}
worker_processes 1;
daemon off;
error_log ${dir}/error.log warn;
pid ${dir}/nginx.pid;
events { worker_connections 256; }
http {
  access_log ${dir}/access.log;
  client_body_temp_path ${dir}/body; proxy_temp_path ${dir}/proxy; fastcgi_temp_path ${dir}/fcgi;
  uwsgi_temp_path ${dir}/uwsgi; scgi_temp_path ${dir}/scgi;
  types { text/html html; application/javascript js mjs; text/css css; application/wasm wasm;
          application/json json; image/svg+xml svg; image/png png; application/zip zip; }
  default_type application/octet-stream;
  sendfile on; keepalive_timeout 30;
  ${gzip ? 'gzip on; gzip_types application/javascript application/wasm text/css application/json;' : ''}
  ${precompressed ? 'gzip_static on;' : ''} ${brotli ? 'brotli_static on;' : ''}
  server {
    listen 127.0.0.1:${port};
    add_header Access-Control-Allow-Origin * always;
    add_header Access-Control-Expose-Headers "Content-Length, Content-Range, ETag, Last-Modified" always;
    add_header Access-Control-Allow-Headers "Range, Authorization, Content-Type, X-Test" always;
    add_header Access-Control-Allow-Methods "GET, HEAD, OPTIONS" always;
    if ($request_method = OPTIONS) { return 204; }
    ${locations.join('\n    ')}
  }
}`;
  writeFileSync(join(dir, 'nginx.conf'), conf);
  // SIGQUIT: nginx's graceful shutdown (lets a test see a cut transfer logged).
  const server = launch(requireBinary(NGINX, 'nginx', 'HUDI_EDGE_NGINX'), ['-p', dir, '-c', join(dir, 'nginx.conf')], { name: 'nginx', stopSignal: 'SIGQUIT', maxMs });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(`${url}/denied/`, server);
  return {
    ...server,
    url,
    port,
    dir,
    /** Requests nginx has logged so far (lines of its access log). */
    accessLog: () => {
      try {
        return readFileSync(join(dir, 'access.log'), 'utf8').split('\n').filter(Boolean);
      } catch {
        return [];
      }
    },
    async stop() {
      await server.stop();
      removeTemp(dir);
    },
  };
}

export const S3_CREDS = { accessKeyId: 'AKIDHUDIEDGETEST', secretAccessKey: 'hudi-edge-test-secret-key', region: 'us-east-1' };
export const BUCKET = 'hudi-tables';

/**
 * moto's S3 server from the project venv (.ci/setup installs it). With `tables` (a directory of
 * unzipped fixtures), every fixture table is loaded under `s3://hudi-tables/<name>/`.
 * `maxMs` as for nginx. Returns { url, python, log(), stop() }.
 */
export async function startMoto({ tables, maxMs = null } = {}) {
  const python = requireBinary(join(cache, 'venv', 'bin', 'python'), "the project venv (moto's S3 server)", 'HUDI_EDGE_CACHE');
  const port = await freePort();
  const server = launch(python, ['-m', 'moto.server', '-H', '127.0.0.1', '-p', String(port)], { name: 'moto', maxMs });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(`${url}/moto-api/`, server);
  if (tables) {
    const c = S3_CREDS;
    await execFileAsync(python, [join(repo, 'tests', 'http', 's3_load.py'), url, BUCKET, tables, ...fixtureNames()], {
      env: { ...process.env, AWS_ACCESS_KEY_ID: c.accessKeyId, AWS_SECRET_ACCESS_KEY: c.secretAccessKey, AWS_DEFAULT_REGION: c.region },
    });
  }
  return { ...server, url, python };
}
