// A table's storage over `fetch`, in JS: ranged GET, HEAD, and listing through a JSON directory
// index (nginx `autoindex_format json`). The engine calls it through `WasmTable.openJs`; it is
// how `HudiTable.open` reads `http(s)://` tables when the wasm build has no HTTP storage of its
// own, and how a custom `fetch` is honoured.

import type { ObjectMeta, StorageObject } from './tracking.js';
import { abortError } from './tracking.js';

export interface HttpStorageOptions {
  fetch?: typeof fetch;
  headers?: Record<string, string>;
  concurrency?: number;
  retries?: number;
}

/** `https://user:pw@host/a/b/?token=x` → `https://host/a/b` (for messages: no secrets). */
export function publicLocation(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}`;
}

/** An error's message without URLs (they may carry credentials or tokens). */
const scrub = (message: string) => message.replace(/\b[a-z][a-z0-9+.-]*:\/\/\S+/gi, '<url>');

const encodePath = (path: string) => path.split('/').map(encodeURIComponent).join('/');

class Semaphore {
  private waiting: (() => void)[] = [];
  private active = 0;
  constructor(private readonly limit: number) {}
  async run<T>(f: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((r) => this.waiting.push(r));
    this.active += 1;
    try {
      return await f();
    } finally {
      this.active -= 1;
      this.waiting.shift()?.();
    }
  }
}

type Init = { method: 'GET' | 'HEAD'; headers?: Record<string, string> };

export class HttpStorage implements StorageObject {
  readonly location: string;
  private readonly base: URL;
  private readonly fetch: typeof fetch;
  private readonly headers: Record<string, string>;
  private readonly retries: number;
  private readonly gate: Semaphore;

  constructor(url: string | URL, options: HttpStorageOptions = {}) {
    const u = new URL(url);
    if (!u.pathname.endsWith('/')) u.pathname += '/';
    u.hash = '';
    this.location = publicLocation(u);
    this.headers = {};
    // fetch refuses URLs with credentials: send them as Basic auth instead.
    if (u.username || u.password) {
      const user = `${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`;
      this.headers.Authorization = `Basic ${btoa(String.fromCharCode(...new TextEncoder().encode(user)))}`;
      u.username = '';
      u.password = '';
    }
    this.base = u;
    const custom = options.fetch;
    // Call the global fetch as a function of the global object (some runtimes insist).
    this.fetch = custom ?? ((input, init) => globalThis.fetch(input, init));
    Object.assign(this.headers, options.headers);
    this.retries = options.retries ?? 2;
    this.gate = new Semaphore(options.concurrency ?? 16);
  }

  private url(path: string, dir: boolean): string {
    const u = new URL(encodePath(path) + (dir && path ? '/' : ''), this.base);
    u.search = this.base.search; // a token in the table URL goes with every request
    return u.toString();
  }

  /** fetch with retries on 5xx / 429 / network errors; never puts the URL in a message. */
  private request(path: string, init: Init, dir: boolean, signal?: AbortSignal): Promise<{ response: Response; body: Uint8Array }> {
    return this.gate.run(async () => {
      for (let attempt = 0; ; attempt++) {
        if (signal?.aborted) throw abortError(path);
        try {
          const response = await this.fetch(this.url(path, dir), {
            method: init.method,
            headers: { ...this.headers, ...init.headers },
            ...(signal ? { signal } : {}),
          });
          if ((response.status >= 500 || response.status === 429) && attempt < this.retries) {
            await response.body?.cancel();
            await sleep(100 * 2 ** attempt, signal);
            continue;
          }
          const body = init.method === 'HEAD' ? new Uint8Array(0) : new Uint8Array(await response.arrayBuffer());
          return { response, body };
        } catch (e) {
          if (signal?.aborted || (e as Error)?.name === 'AbortError') throw abortError(path);
          if ((e as { code?: string }).code === 'ABORTED') throw e;
          if (attempt < this.retries) {
            await sleep(100 * 2 ** attempt, signal);
            continue;
          }
          const why = [(e as Error)?.message, ((e as Error)?.cause as Error)?.message].filter(Boolean).join(': ');
          throw Object.assign(new Error(scrub(`request for ${path} failed: ${why || String(e)}`)), { code: 'IO' });
        }
      }
    });
  }

  async get(path: string, start?: number, end?: number, signal?: AbortSignal): Promise<Uint8Array> {
    const ranged = start !== undefined && end !== undefined;
    if (ranged && end <= start) return new Uint8Array(0);
    const headers: Record<string, string> = ranged ? { Range: `bytes=${start}-${end - 1}` } : {};
    const { response, body } = await this.request(path, { method: 'GET', headers }, false, signal);
    if (response.status === 416) return new Uint8Array(0); // range past the end: clamped to nothing
    check(response, path);
    // A server that ignores Range sends it all.
    if (ranged && response.status === 200) return body.subarray(start, Math.min(end, body.byteLength));
    return body;
  }

  async head(path: string, signal?: AbortSignal): Promise<ObjectMeta> {
    const { response } = await this.request(path, { method: 'HEAD' }, false, signal);
    check(response, path);
    const etag = response.headers.get('etag');
    const lastModified = Date.parse(response.headers.get('last-modified') ?? '');
    return {
      path,
      size: Number(response.headers.get('content-length') ?? 0),
      ...(Number.isFinite(lastModified) ? { lastModified } : {}),
      ...(etag ? { etag } : {}),
    };
  }

  /** The table's manifest (`.hoodie/hudi-edge-manifest.json`), or null: fetched once. */
  private manifest: Promise<Manifest | null> | undefined;

  private loadManifest(signal?: AbortSignal): Promise<Manifest | null> {
    this.manifest ??= (async () => {
      const { response, body } = await this.request(MANIFEST, { method: 'GET' }, false, signal);
      if (response.status === 404) return null;
      check(response, MANIFEST);
      const m = JSON.parse(new TextDecoder().decode(body)) as Manifest;
      if (m.format !== 'hudi-edge-manifest' || m.version !== 1) {
        throw Object.assign(new Error(`${MANIFEST} is not a version 1 hudi-edge manifest`), { code: 'CORRUPT', object: MANIFEST });
      }
      return m;
    })();
    this.manifest.catch(() => (this.manifest = undefined));
    return this.manifest;
  }

  /** From the table's manifest when it has one, else from the host's JSON directory index. */
  async list(prefix: string, recursive: boolean, signal?: AbortSignal): Promise<ObjectMeta[]> {
    const dir = prefix.replace(/^\/+|\/+$/g, '');
    const manifest = await this.loadManifest(signal);
    if (manifest) return manifestList(manifest, dir, recursive);
    // nginx's JSON autoindex hides dot-files: refuse where Hudi writes them (v6 archive,
    // metadata-table partitions) rather than answer short.
    if (dir === '.hoodie/archived' || dir.startsWith('.hoodie/archived/') || /^\.hoodie\/metadata\/(?!\.hoodie(\/|$))./.test(dir)) {
      throw Object.assign(
        new Error(`listing ${dir} through a JSON directory index: it hides dot-files (Hudi log and archive files); use an S3 listing or write a manifest with \`hudi-edge manifest\``),
        { code: 'UNSUPPORTED', object: dir },
      );
    }
    const { response, body } = await this.request(dir, { method: 'GET', headers: { Accept: 'application/json' } }, true, signal);
    if (response.status === 404) return []; // a missing directory lists as empty, as on object stores
    check(response, dir || '/');
    let entries: { name: string; type: string; size?: number; mtime?: string }[];
    try {
      entries = JSON.parse(new TextDecoder().decode(body));
      if (!Array.isArray(entries)) throw new Error('not an array');
    } catch {
      throw Object.assign(
        new Error(`the listing of ${dir || '/'} is not a JSON directory index (nginx "autoindex on; autoindex_format json;") and the table has no ${MANIFEST}`),
        { code: 'UNSUPPORTED', object: dir },
      );
    }
    const out: ObjectMeta[] = [];
    const subdirs: string[] = [];
    for (const e of entries) {
      const path = dir ? `${dir}/${e.name}` : e.name;
      const lastModified = Date.parse(e.mtime ?? '');
      const lm = Number.isFinite(lastModified) ? { lastModified } : {};
      if (e.type === 'directory') {
        if (recursive) subdirs.push(path);
        else out.push({ path, size: 0, isDir: true, ...lm });
      } else if (e.type === 'file') {
        out.push({ path, size: e.size ?? 0, ...lm });
      }
    }
    if (recursive) {
      for (const listed of await Promise.all(subdirs.map((d) => this.list(d, true, signal)))) out.push(...listed);
    }
    return out;
  }
}

/** The listing manifest of the http branch (src/storage/listing.rs), format version 1. */
interface Manifest {
  format: string;
  version: number;
  dirs: Record<string, [string, number, number?][]>;
}

const MANIFEST = '.hoodie/hudi-edge-manifest.json';

function manifestList(m: Manifest, dir: string, recursive: boolean): ObjectMeta[] {
  const under = (d: string) => dir === '' || d === dir || d.startsWith(`${dir}/`);
  const files = (d: string) =>
    (m.dirs[d] ?? []).map(([name, size, mtime]) => ({ path: d ? `${d}/${name}` : name, size, ...(mtime ? { lastModified: mtime } : {}) }));
  if (recursive) return Object.keys(m.dirs).filter(under).flatMap(files);
  const out: ObjectMeta[] = files(dir);
  const subdirs = new Set<string>();
  for (const d of Object.keys(m.dirs)) {
    if (!under(d) || d === dir) continue;
    const first = (dir ? d.slice(dir.length + 1) : d).split('/')[0];
    if (first) subdirs.add(dir ? `${dir}/${first}` : first);
  }
  for (const path of subdirs) out.push({ path, size: 0, isDir: true });
  return out;
}

function check(response: Response, path: string) {
  if (response.ok) return;
  const s = response.status;
  const code = s === 404 || s === 410 ? 'NOT_FOUND' : s === 401 || s === 403 ? 'ACCESS_DENIED' : 'IO';
  throw Object.assign(new Error(`HTTP ${s} ${response.statusText} for ${path}`.replace('  ', ' ')), { code });
}

function sleep(ms: number, signal?: AbortSignal) {
  return new Promise<void>((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        reject(abortError('a retried request'));
      },
      { once: true },
    );
  });
}
