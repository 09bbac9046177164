// A table in a local directory, read and written through Node's `fs`: the storage object
// `HudiTable.open('/path')` uses in Node, exported for `openStorage` / `createStorage` and
// `writeManifest`. Node-only (it imports `node:fs`): the package's Node entry loads it, so
// browser bundles never see it.

import { link, mkdir, open, readdir, rename, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { renameSync, statSync, type BigIntStats } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { ObjectMeta, StorageObject } from './storage-object.js';
import { readPages } from './pages-buffer.js';

export interface FsStorageOptions {
  /** Leave out `put` and `delete`: writes are refused as `READ_ONLY` before any request. */
  readOnly?: boolean;
}

/** A path, a `file://` URL or a `URL` as an absolute directory (relative paths against the
 *  current directory). */
export function localPath(where: string | URL): string {
  if (where instanceof URL || /^file:/i.test(where)) return fileURLToPath(where);
  return resolve(where);
}

const fail = (message: string, code: string, extra: Record<string, unknown> = {}) => Object.assign(new Error(message), { code, ...extra });

// Changes with every replacement (each put renames a new inode in) and every in-place edit.
// Stats in bigint: a float mtimeMs can round a millisecond up, away from what other tools say.
const etagOf = (s: BigIntStats) => `${s.ino}-${s.size}-${s.mtimeNs}`;
const metaOf = (path: string, s: BigIntStats): ObjectMeta => ({ path, size: Number(s.size), lastModified: Number(s.mtimeNs / 1_000_000n), etag: etagOf(s) });
const big = { bigint: true } as const;

/**
 * Storage over the directory `dir` (a path or `file://` URL): ranged reads through one
 * `FileHandle.read` each, listings by `readdir`; writes create objects exclusively (a temp file
 * hard-linked in: of two creators, one gets `CONFLICT` — the commit point of a write), replace
 * them by rename (readers never see half a file), and check etags (inode, size and mtime)
 * before an update-if-match, atomically within one process.
 */
export function fsStorage(dir: string | URL, options: FsStorageOptions = {}): StorageObject {
  const root = localPath(dir);
  let tmpSeq = 0;
  const file = (path: string): string => {
    const p = join(root, path);
    // The engine's paths are relative to the table; none may leave it.
    const rel = relative(root, p);
    if (rel.startsWith(`..${sep}`) || rel === '..' || isAbsolute(rel)) throw fail(`${path} is outside the table's directory`, 'EACCES');
    return p;
  };
  const notDir = (path: string) => fail(`${path} is a directory, not a file`, 'ENOENT');

  async function walk(rel: string, recursive: boolean, enter: (dir: string) => boolean, keep: (path: string) => boolean, out: ObjectMeta[]) {
    let entries;
    try {
      entries = await readdir(file(rel), { withFileTypes: true });
    } catch (e) {
      if ((e as { code?: string }).code === 'ENOENT' || (e as { code?: string }).code === 'ENOTDIR') return;
      throw e;
    }
    const files: string[] = [];
    const dirs: string[] = [];
    for (const e of entries) {
      const p = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) dirs.push(p);
      else if (keep(p)) files.push(p);
    }
    // Stats of one directory at once: the listing of a large timeline folder is one wait.
    const stats = await Promise.all(files.map((p) => stat(file(p), big).then((s) => metaOf(p, s), () => null)));
    for (const m of stats) if (m) out.push(m);
    for (const d of dirs) {
      if (!recursive) out.push({ path: d, size: 0, isDir: true });
      else if (enter(d)) await walk(d, true, enter, keep, out);
    }
  }

  const storage: StorageObject = {
    location: pathToFileURL(root).href,

    async get(path, start, end, signal) {
      try {
        const fh = await open(file(path), 'r');
        try {
          const from = start ?? 0;
          return await readPages(fh, from, Math.max(0, (end ?? Number((await fh.stat()).size)) - from), signal);
        } finally {
          await fh.close();
        }
      } catch (e) {
        throw (e as { code?: string }).code === 'EISDIR' ? notDir(path) : e;
      }
    },

    async head(path) {
      const s = await stat(file(path), big);
      if (s.isDirectory()) throw notDir(path);
      return metaOf(path, s);
    },

    async list(prefix, recursive) {
      const out: ObjectMeta[] = [];
      await walk(prefix.replace(/^\/+|\/+$/g, ''), recursive, () => true, () => true, out);
      return out;
    },

    // One walk of what sorts after `startAfter` (S3's `start-after`): a directory whose
    // every path sorts before it is not entered, so a partition listing skips `.hoodie/`.
    async listAfter(startAfter) {
      const out: ObjectMeta[] = [];
      await walk('', true, (d) => `${d}/` > startAfter || startAfter.startsWith(`${d}/`), (p) => p > startAfter, out);
      return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    },
  };
  if (options.readOnly) return storage;

  storage.put = async (path, data, mode) => {
    const target = file(path);
    // A folder marker (`dir/`, no bytes), as S3 clients write one: a directory here.
    if (path.endsWith('/') && data.byteLength === 0) {
      await mkdir(target, { recursive: true });
      return { path, size: 0 };
    }
    await mkdir(join(target, '..'), { recursive: true });
    const tmp = `${target}.hudi-edge-tmp-${process.pid}-${tmpSeq++}`;
    await writeFile(tmp, data, { flag: 'wx' });
    try {
      if (mode === 'create') {
        // link() fails when the name exists: an exclusive create that never shows a partial file.
        try {
          await link(tmp, target);
        } catch (e) {
          if ((e as { code?: string }).code === 'EEXIST') throw fail(`${path} exists`, 'EEXIST', { conflict: true });
          throw e;
        }
      } else if (mode === 'overwrite') {
        await rename(tmp, target);
      } else {
        // Check and replace with no await between them: no other put of this process interleaves.
        let current;
        try {
          current = statSync(target, big);
        } catch (e) {
          if ((e as { code?: string }).code === 'ENOENT') throw fail(`${path} is gone`, 'ENOENT', { conflict: true });
          throw e;
        }
        if (etagOf(current) !== mode) throw fail(`${path} changed (etag ${mode})`, 'PRECONDITION_FAILED', { conflict: true });
        renameSync(tmp, target);
      }
    } finally {
      await unlink(tmp).catch(() => {});
    }
    return metaOf(path, await stat(target, big));
  };
  storage.delete = async (path) => {
    await rm(file(path), { force: true });
  };
  return storage;
}
