// Buffers for bytes that live briefly (a module's bytes until compiled, a file's until the
// engine has copied them): a resizable ArrayBuffer's memory is mapped from the
// system's pages (not malloc) and not counted as V8's external memory; it is unmapped when
// the buffer is collected or `resize(0)`d.

import type { FileHandle } from 'node:fs/promises';

/** An ArrayBuffer that can give its memory back (`resize(0)`). */
export type Resizable = ArrayBuffer & { resize(length: number): void };
const ResizableBuffer = ArrayBuffer as unknown as new (length: number, o: { maxByteLength: number }) => Resizable;

/** A buffer of `length` bytes from the system's pages. */
const pagesBuffer = (length: number): Resizable => new ResizableBuffer(length, { maxByteLength: length });

/** `want` bytes of `fh` from `from` (fewer where the file ends first), read into a
 *  page-mapped buffer: a whole-table read's many short-lived buffers then leave no freed
 *  malloc space between the result's long-lived pieces. */
export async function readPages(fh: FileHandle, from: number, want: number, signal?: AbortSignal): Promise<Uint8Array<ArrayBuffer>> {
  const buf = new Uint8Array(pagesBuffer(want));
  let n = 0;
  // A read may answer short.
  for (let got = -1; got !== 0 && n < want; n += got) {
    signal?.throwIfAborted();
    got = (await fh.read(buf, n, want - n, from + n)).bytesRead;
  }
  return n === want ? buf : buf.subarray(0, n);
}
