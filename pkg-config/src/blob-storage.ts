// A table held in local `File`s / `Blob`s (a picked folder, dropped files): read lazily by
// slicing, so a large table is not loaded into memory.

import type { ObjectMeta, StorageObject } from './storage-object.js';

export interface LocalFile {
  /** Path relative to the table's base path, `/`-separated. */
  path: string;
  data: Blob | Uint8Array;
  /** Modification time, epoch milliseconds (v6 tables take completion times from it). */
  lastModified?: number;
}

export class BlobStorage implements StorageObject {
  readonly location: string;
  private readonly files = new Map<string, LocalFile>();

  constructor(files: Iterable<LocalFile>, location = 'local://') {
    this.location = location;
    for (const f of files) this.files.set(f.path.replace(/^\/+/, ''), f);
  }

  private file(path: string): LocalFile {
    const f = this.files.get(path);
    if (!f) throw Object.assign(new Error(`not found: ${path}`), { code: 'NOT_FOUND' });
    return f;
  }

  async get(path: string, start?: number, end?: number): Promise<Uint8Array> {
    const { data } = this.file(path);
    const size = data instanceof Uint8Array ? data.byteLength : data.size;
    const s = Math.min(start ?? 0, size);
    const e = Math.min(end ?? size, size);
    if (data instanceof Uint8Array) return data.subarray(s, Math.max(s, e));
    return new Uint8Array(await data.slice(s, Math.max(s, e)).arrayBuffer());
  }

  async head(path: string): Promise<ObjectMeta> {
    const f = this.file(path);
    return { path, size: f.data instanceof Uint8Array ? f.data.byteLength : f.data.size, ...(f.lastModified ? { lastModified: f.lastModified } : {}) };
  }

  /** The files are all in hand: one pass instead of one listing per directory. */
  async listAfter(startAfter: string): Promise<ObjectMeta[]> {
    return (await this.list('', true)).filter((m) => m.path > startAfter);
  }

  async list(prefix: string, recursive: boolean): Promise<ObjectMeta[]> {
    const dir = prefix.replace(/\/+$/, '');
    const start = dir ? `${dir}/` : '';
    const out: ObjectMeta[] = [];
    const dirs = new Set<string>();
    for (const [path, f] of this.files) {
      if (!path.startsWith(start)) continue;
      const rest = path.slice(start.length);
      const slash = rest.indexOf('/');
      if (slash >= 0 && !recursive) {
        dirs.add(start + rest.slice(0, slash));
        continue;
      }
      out.push({
        path,
        size: f.data instanceof Uint8Array ? f.data.byteLength : f.data.size,
        ...(f.lastModified ? { lastModified: f.lastModified } : {}),
      });
    }
    for (const d of dirs) out.push({ path: d, size: 0, isDir: true });
    return out;
  }
}
