// Plain-object rows as an Arrow table, built from typed arrays. apache-arrow's `tableFromJSON`
// compiles its null checks with `new Function`, which edge runtimes (Cloudflare Workers,
// workerd) refuse; this path makes no code. Columns take JS types (strings, numbers, bigints,
// booleans, bytes); the engine converts them to the table's types (decimals, dates and
// timestamps from their text, as `rows()` prints them). Nested values (objects, arrays) are
// left to `tableFromJSON` (Node and browsers), which returns null here.

import { Binary, Bool, Float64, Int64, Table, Utf8, makeData, makeVector, type DataType, type Vector } from 'apache-arrow';
import { InvalidInputError } from './errors.js';

type Kind = 'string' | 'number' | 'bigint' | 'boolean' | 'bytes';

function kindOf(v: unknown): Kind | 'nested' | 'bad' {
  switch (typeof v) {
    case 'string':
    case 'number':
    case 'bigint':
    case 'boolean':
      return typeof v as Kind;
    case 'object':
      if (v instanceof Uint8Array) return 'bytes';
      if (v instanceof Date) return 'string';
      return 'nested';
    default:
      return 'bad';
  }
}

function validity(values: unknown[]): { bitmap: Uint8Array; nulls: number } {
  const bitmap = new Uint8Array((values.length + 7) >> 3);
  let nulls = 0;
  values.forEach((v, i) => (v === null || v === undefined ? nulls++ : (bitmap[i >> 3] |= 1 << (i & 7))));
  return { bitmap, nulls };
}

function variable(values: unknown[], type: Utf8 | Binary, bytesOf: (v: unknown, row: number) => Uint8Array): Vector {
  const parts = values.map((v, row) => (v === null || v === undefined ? new Uint8Array(0) : bytesOf(v, row)));
  const offsets = new Int32Array(values.length + 1);
  parts.forEach((p, i) => (offsets[i + 1] = offsets[i] + p.length));
  const data = new Uint8Array(offsets[values.length]);
  parts.forEach((p, i) => data.set(p, offsets[i]));
  const { bitmap, nulls } = validity(values);
  return makeVector(makeData({ type, length: values.length, nullCount: nulls, nullBitmap: bitmap, valueOffsets: offsets, data } as never));
}

/** Text encoded straight into one buffer, sized by a first pass (exact for ASCII; grown when
 *  other text needs more): no array of a value's bytes per row, so what the JS side holds
 *  beside the rows is about their UTF-8 size. */
function utf8(values: unknown[], textOf: (v: unknown, row: number) => string): Vector {
  const encoder = new TextEncoder();
  const offsets = new Int32Array(values.length + 1);
  let units = 0;
  values.forEach((v, row) => v !== null && v !== undefined && (units += textOf(v, row).length));
  let data = new Uint8Array(units);
  let at = 0;
  values.forEach((v, row) => {
    if (v !== null && v !== undefined) {
      const text = textOf(v, row);
      let { read, written } = encoder.encodeInto(text, data.subarray(at));
      while (read < text.length) {
        // UTF-8 takes at most 3 bytes per UTF-16 code unit.
        const grown = new Uint8Array(Math.max(data.length * 2, at + written + (text.length - read) * 3));
        grown.set(data.subarray(0, at + written));
        data = grown;
        const rest = encoder.encodeInto(text.slice(read), data.subarray(at + written));
        read += rest.read;
        written += rest.written;
      }
      at += written;
    }
    offsets[row + 1] = at;
  });
  if (at < data.length) data = data.slice(0, at);
  const { bitmap, nulls } = validity(values);
  return makeVector(makeData({ type: new Utf8(), length: values.length, nullCount: nulls, nullBitmap: bitmap, valueOffsets: offsets, data } as never));
}

/** A value of a text column as its text: numbers and bigints there came beside strings (JSON
 *  that spells only the large int64 values as text) and convert as the strings do. */
function textOf(v: unknown, row: number, column: string): string {
  if (v instanceof Date) return v.toISOString();
  if (typeof v === 'number' && Number.isInteger(v) && !Number.isSafeInteger(v)) {
    throw new InvalidInputError(`invalid input: row ${row}, column ${JSON.stringify(column)}: ${v} is beyond JavaScript's safe integers: pass it as a bigint or a string`, undefined, { row, column });
  }
  return typeof v === 'string' ? v : String(v);
}

function vectorOf(kind: Kind, values: unknown[], column: string): Vector {
  const { bitmap, nulls } = validity(values);
  const fixed = <T extends DataType>(type: T, data: ArrayLike<unknown>) =>
    makeVector(makeData({ type, length: values.length, nullCount: nulls, nullBitmap: bitmap, data } as never));
  switch (kind) {
    case 'string':
      return utf8(values, (v, row) => textOf(v, row, column));
    case 'bytes':
      return variable(values, new Binary(), (v) => v as Uint8Array);
    case 'number':
      return fixed(new Float64(), Float64Array.from(values, (v) => (v == null ? 0 : (v as number))));
    case 'bigint':
      return fixed(
        new Int64(),
        BigInt64Array.from(values, (v, row) => {
          if (v == null) return 0n;
          if (typeof v === 'bigint') return v;
          if (Number.isSafeInteger(v)) return BigInt(v as number);
          throw new InvalidInputError(`invalid input: row ${row}, column ${JSON.stringify(column)}: ${v} is not an integer (the column holds bigints)`, undefined, { row, column });
        }),
      );
    case 'boolean': {
      const bits = new Uint8Array((values.length + 7) >> 3);
      values.forEach((v, i) => v === true && (bits[i >> 3] |= 1 << (i & 7)));
      return fixed(new Bool(), bits);
    }
  }
}

/** About what a value takes in Arrow: its bytes (text counted in UTF-16 units, exact for
 *  ASCII) and a variable-length value's offset. */
function arrowBytes(kind: Kind, v: unknown): number {
  switch (kind) {
    case 'string':
      return 4 + (typeof v === 'string' ? v.length : 24);
    case 'bytes':
      return 4 + (v as Uint8Array).byteLength;
    case 'boolean':
      return 1;
    default:
      return 8;
  }
}

const MiB = 1 << 20;
const size = (n: number) => (n % MiB === 0 ? `${n / MiB} MiB` : `${n} bytes`);

/** The rows as an Arrow table, or null when a value is nested (objects, arrays). Refused
 *  while being read when they come to more than `maxBytes` of Arrow, before the columns are
 *  built: the conversion holds several times its output in JS. */
export function rowsToArrow(rows: unknown[], maxBytes = Infinity, limitKey = 'the limit'): Table | null {
  const columns = new Map<string, { kind: Kind | undefined; values: unknown[] }>();
  rows.forEach((row, i) => {
    if (row === null || typeof row !== 'object' || Array.isArray(row)) {
      throw new InvalidInputError(`invalid input: row ${i} is not an object`, undefined, { row: i });
    }
    // `for…in`, not `Object.entries`: no array of pairs per row.
    for (const name in row) {
      if (!Object.hasOwn(row, name)) continue;
      const value = (row as Record<string, unknown>)[name];
      if (value === undefined) continue;
      let c = columns.get(name);
      if (!c) columns.set(name, (c = { kind: undefined, values: [] }));
      c.values.length = i;
      c.values.push(value);
    }
  });
  const vectors: Record<string, Vector> = {};
  let bytes = 0;
  for (const [name, c] of columns) {
    c.values.length = rows.length;
    // Rows without the column left holes: nulls (`forEach` and `map` skip holes).
    c.values = Array.from(c.values);
    for (let row = 0; row < c.values.length; row++) {
      const v = c.values[row];
      if (v === null || v === undefined) continue;
      const kind = kindOf(v);
      if (kind === 'nested') return null;
      if (kind === 'bad') throw new InvalidInputError(`invalid input: row ${row}, column ${JSON.stringify(name)}: a ${typeof v} is not a value`, undefined, { row, column: name });
      // Integers beside bigints are int64; numbers or bigints beside strings are text (the
      // engine converts text to the column's type); other mixes are the caller's mistake.
      const numeric = (k: Kind) => k === 'number' || k === 'bigint';
      const merged =
        c.kind === undefined || c.kind === kind
          ? kind
          : numeric(c.kind) && numeric(kind)
            ? 'bigint'
            : [c.kind, kind].every((k) => numeric(k) || k === 'string')
              ? 'string'
              : null;
      if (!merged) throw new InvalidInputError(`invalid input: row ${row}, column ${JSON.stringify(name)}: a ${kind} among ${c.kind} values`, undefined, { row, column: name });
      c.kind = merged;
      bytes += arrowBytes(kind, v);
      if (bytes > maxBytes) throw objectsTooLarge(rows.length, maxBytes, limitKey);
    }
    vectors[name] = vectorOf(c.kind ?? 'string', c.values, name);
  }
  return new Table(vectors);
}

/** Objects past the package's limit for them: what to do instead. */
export function objectsTooLarge(count: number, maxBytes: number, limitKey: string): InvalidInputError {
  return new InvalidInputError(
    `invalid input: the ${count} rows given as objects come to more than ${size(maxBytes)} as Arrow; ` +
      `the limit for objects is ${size(maxBytes)} (set ${limitKey}, hand an apache-arrow Table or Arrow IPC bytes, ` +
      `which take up to hudi-edge.write.max.input.bytes, or write them in several commits)`,
  );
}
