// Buffers for bytes that live briefly: a resizable ArrayBuffer's memory is mapped from the
// system's pages (not malloc) and not counted as V8's external memory; it is unmapped when
// the buffer is collected or `resize(0)`d.

/** An ArrayBuffer that can give its memory back (`resize(0)`). */
export type Resizable = ArrayBuffer & { resize(length: number): void };
const ResizableBuffer = ArrayBuffer as unknown as new (length: number, o: { maxByteLength: number }) => Resizable;

/** A buffer of `length` bytes from the system's pages. */
export const pagesBuffer = (length: number): Resizable => new ResizableBuffer(length, { maxByteLength: length });
