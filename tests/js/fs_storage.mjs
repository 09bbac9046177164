// A Storage for the wasm build over node:fs (the JsStorage path, as an application would plug
// one in); used by the Node tests and the benchmarks. `put` / `delete` make tables writable;
// `fsStorage(root, { readOnly: true })` leaves them out.
import { readFile, stat, readdir, open, writeFile, mkdir, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';

export function fsStorage(root, { readOnly = false } = {}) {
  const storage = {
    location: `file://${root}`,
    async get(path, start, end) {
      if (start === undefined) return new Uint8Array(await readFile(join(root, path)));
      const fh = await open(join(root, path));
      try {
        const size = (await fh.stat()).size;
        const len = Math.max(0, Math.min(end, size) - start);
        const buf = new Uint8Array(len);
        await fh.read(buf, 0, len, start);
        return buf;
      } finally {
        await fh.close();
      }
    },
    async head(path) {
      const s = await stat(join(root, path));
      if (s.isDirectory()) throw Object.assign(new Error(`${path} is a directory`), { code: 'ENOENT' });
      return { path, size: s.size, lastModified: s.mtimeMs };
    },
    async list(prefix, recursive) {
      const out = [];
      const walk = async (dir) => {
        let entries;
        try {
          entries = await readdir(join(root, dir), { withFileTypes: true });
        } catch (e) {
          if (e.code === 'ENOENT') return;
          throw e;
        }
        for (const e of entries) {
          const p = dir ? `${dir}/${e.name}` : e.name;
          if (e.isDirectory()) {
            if (recursive) await walk(p);
            else out.push({ path: p, size: 0, isDir: true });
          } else {
            const s = await stat(join(root, p));
            out.push({ path: p, size: s.size, lastModified: s.mtimeMs });
          }
        }
      };
      await walk(prefix);
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
