// Tables in local directories (paths and `file://` URLs): Node's entry registers a storage over
// `node:fs` here; other entries register nothing, so browser bundles never import `node:fs`.

import type { StorageObject } from './storage-object.js';

type LocalStorageFactory = (where: string | URL) => StorageObject;
let factory: LocalStorageFactory | undefined;

/** Used by the Node entry: how a path or `file://` URL becomes a storage. */
export function setLocalStorageFactory(f: LocalStorageFactory): void {
  factory = f;
}

/** A path (absolute, relative, Windows `C:\…`) or a `file:` URL, as opposed to a URL with a
 *  scheme of its own (`https:`, `s3:`). */
export function isLocal(where: string | URL): boolean {
  if (where instanceof URL) return where.protocol === 'file:';
  return /^file:/i.test(where) || !/^[a-z][a-z0-9+.-]+:/i.test(where);
}

/** The storage for a local table, or undefined outside Node. */
export function localStorageFor(where: string | URL): StorageObject | undefined {
  return factory?.(where);
}
