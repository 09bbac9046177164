// The first requests of an open, sent while the module still compiles: an open's first round
// (the table's properties and timeline listing, and the metadata table's when it is
// prefetched) depends on nothing but the table's location, so a cold open need not wait for
// the module before asking for it.

import { optionalMethods, type ObjectMeta, type StorageObject } from './storage-object.js';

/** What the engine's open asks for first (src/meta_client/mod.rs, src/storage/layers/mdt_prefetch.rs). */
const PROPERTIES = '.hoodie/hoodie.properties';
const TIMELINE = '.hoodie/timeline';
const MDT_PROPERTIES = '.hoodie/metadata/.hoodie/hoodie.properties';
const MDT = '.hoodie/metadata';

type Pending = Map<string, Promise<unknown>>;

/** Takes the answer held under `key` (once), or undefined. */
function take(pending: Pending, key: string): Promise<unknown> | undefined {
  const held = pending.get(key);
  pending.delete(key);
  return held;
}

/** Rejections of answers nobody took are not reported (the engine asks again when it needs them). */
function hold(pending: Pending, key: string, request: () => Promise<unknown>) {
  let answer: Promise<unknown>;
  try {
    answer = Promise.resolve(request());
  } catch (e) {
    answer = Promise.reject(e);
  }
  answer.catch(() => {});
  pending.set(key, answer);
}

/**
 * `storage` with an open's first requests already sent: the engine's first `get` of each
 * file and `list` of each folder above is answered by them (once, then everything goes to
 * `storage`). Every other method is `storage`'s own. `done()` drops what the open did not
 * ask for.
 */
export function primeOpen(storage: StorageObject, metadataTable: boolean): { storage: StorageObject; done: () => void } {
  const pending: Pending = new Map();
  const whole = (path: string) => `get ${path}`;
  const listing = (prefix: string, recursive: boolean) => `list ${prefix} ${recursive}`;
  hold(pending, whole(PROPERTIES), () => storage.get(PROPERTIES));
  hold(pending, listing(TIMELINE, false), () => storage.list(TIMELINE, false));
  if (metadataTable) {
    hold(pending, whole(MDT_PROPERTIES), () => storage.get(MDT_PROPERTIES));
    hold(pending, listing(MDT, true), () => storage.list(MDT, true));
  }
  const primed: StorageObject = {
    ...optionalMethods(storage),
    location: storage.location,
    get: (path, start, end, signal) => {
      const held = start === undefined && end === undefined ? take(pending, whole(path)) : undefined;
      return (held as Promise<Uint8Array> | undefined) ?? storage.get(path, start, end, signal);
    },
    head: (path, signal) => storage.head(path, signal),
    list: (prefix, recursive, signal) =>
      (take(pending, listing(prefix, recursive)) as Promise<ObjectMeta[]> | undefined) ?? storage.list(prefix, recursive, signal),
  };
  return { storage: primed, done: () => pending.clear() };
}

/** Where the engine's HTTP storage asks for listings when the host has no list API (src/storage/listing/mod.rs). */
const MANIFEST = '.hoodie/hudi-edge-manifest.json';

interface UrlOpenOptions {
  fetch?: typeof fetch;
  headers?: Record<string, string>;
  listing?: string;
  prefetchMetadataTable?: boolean;
}

/**
 * The same for a table opened by `http(s)://` URL: the engine's own HTTP storage asks first for
 * `hoodie.properties` and, unless the listing is the host's directory index, the table's
 * manifest (and the metadata table's properties when prefetched). Those plain GETs are sent
 * now through `fetch`, and the returned `fetch` answers the engine's first identical request
 * for each (a GET of that URL with no headers) with the held response. Undefined where the
 * engine's requests are not those (`s3://`, credentials in the URL, extra headers).
 */
export function primeUrlOpen(url: URL, o: UrlOpenOptions): { fetch: typeof fetch; done: () => void } | undefined {
  if (!['http:', 'https:'].includes(url.protocol) || url.username || url.password) return undefined;
  if (o.headers && Object.keys(o.headers).length > 0) return undefined;
  // Called as the engine calls it: on the global object.
  const send = o.fetch ?? globalThis.fetch;
  if (typeof send !== 'function') return undefined;
  // As the engine builds an object's URL: the base with a trailing slash, the path, the base's query.
  const base = new URL(url);
  if (!base.pathname.endsWith('/')) base.pathname += '/';
  base.hash = '';
  const objectUrl = (path: string) => {
    const u = new URL(path, base.origin + base.pathname);
    u.search = base.search;
    return u.toString();
  };
  const paths = [PROPERTIES];
  if ((o.listing ?? 'auto') === 'auto' || o.listing === 'manifest') paths.push(MANIFEST);
  if (o.prefetchMetadataTable) paths.push(MDT_PROPERTIES);
  const pending: Pending = new Map();
  for (const path of paths) {
    const target = objectUrl(path);
    hold(pending, target, () => send.call(globalThis, target));
  }
  const primed = ((input: RequestInfo | URL, init?: RequestInit) => {
    const plain = typeof input === 'string' && (init?.method ?? 'GET') === 'GET' && init?.body == null && !hasHeaders(init?.headers);
    const held = plain ? (take(pending, input) as Promise<Response> | undefined) : undefined;
    return held ?? send.call(globalThis, input, init);
  }) as typeof fetch;
  const done = () => {
    // Answers nobody took: their bodies are released, not left to hold a connection.
    for (const held of pending.values()) (held as Promise<Response>).then((r) => r.body?.cancel()).catch(() => {});
    pending.clear();
  };
  return { fetch: primed, done };
}

function hasHeaders(headers: HeadersInit | undefined): boolean {
  if (headers == null) return false;
  if (headers instanceof Headers) {
    let any = false;
    headers.forEach(() => (any = true));
    return any;
  }
  return Array.isArray(headers) ? headers.length > 0 : Object.keys(headers).length > 0;
}
