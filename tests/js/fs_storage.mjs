// A Storage for the wasm build over node:fs (the JsStorage path, as an application would plug
// one in); used by the Node tests and the benchmarks. `put` / `delete` make tables writable;
// `fsStorage(root, { readOnly: true })` leaves them out; `{ etags: true }` adds content-hash
// etags and update-if-match puts (what the storage-based lock needs), atomic within one
// process. `{ listIndex: true }` (read-only) answers listings from an index of the table
// made once when the storage is made, as an object store lists from its index: benchmarks that
// time a cold query do not book this process's directory walk as the engine's time.
import { readFile, stat, writeFile, mkdir, rm } from 'node:fs/promises';
import { readFileSync, writeFileSync, renameSync, linkSync, unlinkSync, mkdirSync, openSync, readSync, closeSync, readdirSync, statSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';

const etagOf = (bytes) => createHash('sha1').update(bytes).digest('hex');
const conflict = (message) => Object.assign(new Error(message), { conflict: true });

/** Depth-first over the entries of `dir` (relative to `root`) in readdir order: `file(path)`
 * for each file, `directory(path)` for each directory; a missing `dir` has none. */
function visit(root, dir, file, directory) {
  let entries;
  try {
    entries = readdirSync(join(root, dir), { withFileTypes: true });
  } catch (e) {
    if (e.code === 'ENOENT') return;
    throw e;
  }
  for (const e of entries) {
    const p = dir ? `${dir}/${e.name}` : e.name;
    if (e.isDirectory()) directory(p);
    else file(p);
  }
}

const fileMeta = (root, path) => {
  const s = statSync(join(root, path));
  return { path, size: s.size, lastModified: s.mtimeMs };
};

export function fsStorage(root, { readOnly = false, etags = false, listIndex = false } = {}) {
  if (etags) return etagFsStorage(root);
  if (listIndex) return indexedFsStorage(root);
  const storage = {
    location: `file://${root}`,
    async get(path, start, end) {
      if (start === undefined) {
        // A view of the Buffer read, not a copy: one allocation per read, as a fetch makes.
        const b = readFileSync(join(root, path));
        return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
      }
      // Synchronous: reading a local file is quicker than four thread-pool hops.
      const fd = openSync(join(root, path), 'r');
      try {
        const buf = new Uint8Array(Math.max(0, end - start));
        let n = 0;
        for (let got = 1; got > 0 && n < buf.length; n += got) {
          got = readSync(fd, buf, n, buf.length - n, start + n);
        }
        return n === buf.length ? buf : buf.subarray(0, n);
      } finally {
        closeSync(fd);
      }
    },
    async head(path) {
      const s = await stat(join(root, path));
      if (s.isDirectory()) throw Object.assign(new Error(`${path} is a directory`), { code: 'ENOENT' });
      return { path, size: s.size, lastModified: s.mtimeMs };
    },
    // Listings are synchronous too: a thousand awaited stats cost 30-70 ms, which a benchmark
    // would book as the engine's time, where one S3 LIST page of as many keys is one request.
    async list(prefix, recursive) {
      const out = [];
      const walk = (dir) =>
        visit(root, dir, (p) => out.push(fileMeta(root, p)), (p) => (recursive ? walk(p) : out.push({ path: p, size: 0, isDir: true })));
      walk(prefix);
      return out;
    },
    // Optional in the interface: one walk of what sorts after `startAfter`, as S3's
    // `start-after` (a directory whose every path sorts before it is not entered).
    async listAfter(startAfter) {
      const out = [];
      const walk = (dir) =>
        visit(
          root,
          dir,
          (p) => p > startAfter && out.push(fileMeta(root, p)),
          (p) => (`${p}/` > startAfter || startAfter.startsWith(`${p}/`)) && walk(p),
        );
      walk('');
      return out;
    },
  };
  if (readOnly) return storage;
  return {
    ...storage,
    // `create` is exclusive (`wx`: EEXIST, which the engine reads as a conflict); there are no
    // etags here, so an update-if-match is refused as a conflict.
    async put(path, data, mode) {
      const file = join(root, path);
      // A folder marker (`dir/`, no bytes), as S3 clients write one: a directory here.
      if (path.endsWith('/') && data.byteLength === 0) return mkdir(file, { recursive: true }).then(() => ({ path, size: 0 }));
      await mkdir(dirname(file), { recursive: true });
      if (mode !== 'create' && mode !== 'overwrite') throw Object.assign(new Error(`no etags: ${path}`), { conflict: true });
      await writeFile(file, data, { flag: mode === 'create' ? 'wx' : 'w' });
      return { path, size: data.byteLength };
    },
    async delete(path) {
      await rm(join(root, path), { force: true });
    },
  };
}

// Reads as `fsStorage(root, { readOnly: true })`; every directory's listings (recursive or
// not) made now from one walk, so a list costs this process only a lookup.
function indexedFsStorage(root) {
  const base = fsStorage(root, { readOnly: true });
  const files = [];
  const dirs = [''];
  const walk = (dir) =>
    visit(
      root,
      dir,
      (p) => files.push(fileMeta(root, p)),
      (p) => {
        dirs.push(p);
        walk(p);
      },
    );
  walk('');
  const byPath = (a, b) => (a < b ? -1 : a > b ? 1 : 0);
  files.sort((a, b) => byPath(a.path, b.path));
  dirs.sort(byPath);
  const under = (dir) => (dir ? `${dir}/` : '');
  const child = (p, pre) => p.startsWith(pre) && !p.slice(pre.length).includes('/');
  const listings = new Map();
  for (const d of dirs) {
    const pre = under(d);
    const deep = files.filter((f) => f.path.startsWith(pre));
    const flat = [...deep.filter((f) => child(f.path, pre)), ...dirs.filter((x) => x && child(x, pre)).map((x) => ({ path: x, size: 0, isDir: true }))];
    listings.set(d, { deep, flat });
  }
  return {
    ...base,
    async list(prefix, recursive) {
      const found = listings.get(prefix.replace(/^\/+|\/+$/g, ''));
      return found ? (recursive ? found.deep : found.flat).map((m) => ({ ...m })) : [];
    },
    async listAfter(startAfter) {
      return files.filter((f) => f.path > startAfter).map((f) => ({ ...f }));
    },
  };
}

// Objects are replaced by rename and created by hard link, and the etag check runs with no
// await before the write: a reader never sees half an object, and no two puts of this process
// interleave between check and write.
function etagFsStorage(root) {
  const base = fsStorage(root);
  let tmpSeq = 0;
  const place = (path, data, mode) => {
    const file = join(root, path);
    mkdirSync(dirname(file), { recursive: true });
    const tmp = `${file}.tmp-${process.pid}-${tmpSeq++}`;
    writeFileSync(tmp, data);
    try {
      if (mode === 'create') {
        try {
          linkSync(tmp, file);
        } catch (e) {
          if (e.code === 'EEXIST') throw conflict(`${path} exists`);
          throw e;
        }
      } else {
        if (mode !== 'overwrite') {
          let current;
          try {
            current = readFileSync(file);
          } catch (e) {
            if (e.code === 'ENOENT') throw conflict(`${path} is gone`);
            throw e;
          }
          if (etagOf(current) !== mode) throw conflict(`${path} changed (etag ${mode})`);
        }
        renameSync(tmp, file);
        return;
      }
    } finally {
      try {
        unlinkSync(tmp);
      } catch {
        // renamed away
      }
    }
  };
  return {
    ...base,
    async head(path) {
      const meta = await base.head(path);
      return { ...meta, etag: etagOf(await readFile(join(root, path))) };
    },
    async put(path, data, mode) {
      if (path.endsWith('/') && data.byteLength === 0) return mkdir(join(root, path), { recursive: true }).then(() => ({ path, size: 0 }));
      place(path, data, mode);
      return { path, size: data.byteLength, etag: etagOf(data) };
    },
  };
}
