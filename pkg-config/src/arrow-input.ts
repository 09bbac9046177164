// Arrow input from any copy of apache-arrow. An application's copy is often not ours: another
// version, or the CommonJS build beside our ES module one. Our IPC writer dispatches on
// `instanceof`, and with another copy's types it writes a broken stream, so such a Table or
// RecordBatch is first rebuilt from our classes. Only the types and the `Data` nodes are new;
// the buffers are shared, not copied.

import { Data, DataType, Field, RecordBatch, Schema, Table, Type, Vector } from 'apache-arrow';
import * as arrow from 'apache-arrow';
import { InvalidInputError } from './errors.js';

/** What another copy of apache-arrow hands us: its objects, typed by their fields alone. */
type Foreign = any;

/** `rows` as one of our Tables when it is an apache-arrow Table or RecordBatch (ours or
 *  another copy's); `null` when it is neither. */
export function arrowTableOf(rows: unknown): Table | null {
  if (!rows || typeof rows !== 'object' || !('schema' in rows)) return null;
  const given = rows as Foreign;
  if (!Array.isArray(given.schema?.fields)) return null;
  const isTable = Array.isArray(given.batches);
  if (!isTable && !(given.data && typeof given.numRows === 'number')) return null;
  if (typesAreOurs(given.schema)) {
    return isTable ? (given as Table) : new Table(given as RecordBatch);
  }
  try {
    const schema = adoptSchema(given.schema);
    return new Table(schema, (isTable ? given.batches : [given]).map((b: Foreign) => adoptBatch(schema, b)));
  } catch (e) {
    if (e instanceof InvalidInputError) throw e;
    throw new InvalidInputError(`invalid input: the Arrow ${isTable ? 'Table' : 'RecordBatch'} does not read as one: ${(e as Error)?.message ?? e}`, undefined, { cause: e });
  }
}

/** `columns` as one of our Schemas when it is an apache-arrow Schema, Table or RecordBatch
 *  (ours or another copy's); `null` otherwise. */
export function arrowSchemaOf(columns: unknown): Schema | null {
  const given = columns as Foreign;
  if (!given || typeof given !== 'object') return null;
  const schema = Array.isArray(given.fields) ? given : given.schema;
  if (!Array.isArray(schema?.fields)) return null;
  return typesAreOurs(schema) ? (schema as Schema) : adoptSchema(schema);
}

/** apache-arrow makes `instanceof Table` (Schema, RecordBatch, Data) hold across copies, but
 *  not `instanceof DataType`, which is what its IPC writer goes by. */
function typesAreOurs(schema: Foreign): boolean {
  return (schema.fields as Foreign[]).every((f) => f.type instanceof DataType);
}

function adoptSchema(s: Foreign): Schema {
  return new Schema(s.fields.map(adoptField), new Map(s.metadata ?? []));
}

function adoptBatch(schema: Schema, b: Foreign): RecordBatch {
  return new RecordBatch(schema, adoptData(b.data) as Data<arrow.Struct>, new Map(b.metadata ?? []));
}

function adoptField(f: Foreign): Field {
  return new Field(f.name, adoptType(f.type), f.nullable, new Map(f.metadata ?? []));
}

function adoptData(d: Foreign): Data {
  const dictionary = d.dictionary ? new Vector((d.dictionary.data as Foreign[]).map(adoptData)) : undefined;
  const children = (d.children ?? []).map(adoptData);
  return new Data(adoptType(d.type), d.offset, d.length, d.nullCount, d.buffers, children, dictionary, d.variadicBuffers);
}

/** Another copy's type as ours, by its type id and parameters (Arrow's own, in every version). */
function adoptType(t: Foreign): DataType {
  const children = () => (t.children as Foreign[]).map(adoptField);
  switch (t.typeId as Type) {
    case Type.Null:
      return new arrow.Null();
    case Type.Int:
      return new arrow.Int(t.isSigned, t.bitWidth);
    case Type.Float:
      return new arrow.Float(t.precision);
    case Type.Binary:
      return new arrow.Binary();
    case Type.LargeBinary:
      return new arrow.LargeBinary();
    case Type.Utf8:
      return new arrow.Utf8();
    case Type.LargeUtf8:
      return new arrow.LargeUtf8();
    case Type.Bool:
      return new arrow.Bool();
    case Type.Decimal:
      return new arrow.Decimal(t.scale, t.precision, t.bitWidth);
    case Type.Date:
      return new arrow.Date_(t.unit);
    case Type.Time:
      return new arrow.Time(t.unit, t.bitWidth);
    case Type.Timestamp:
      return new arrow.Timestamp(t.unit, t.timezone);
    case Type.Interval:
      return new arrow.Interval(t.unit);
    case Type.Duration:
      return new arrow.Duration(t.unit);
    case Type.FixedSizeBinary:
      return new arrow.FixedSizeBinary(t.byteWidth);
    case Type.List:
      return new arrow.List(children()[0]);
    case Type.FixedSizeList:
      return new arrow.FixedSizeList(t.listSize, children()[0]);
    case Type.Struct:
      return new arrow.Struct(children());
    case Type.Map:
      return new arrow.Map_(children()[0] as Field<arrow.Struct>, t.keysSorted);
    case Type.Union:
      return new arrow.Union(t.mode, [...t.typeIds], children());
    case Type.Dictionary:
      return new arrow.Dictionary(adoptType(t.dictionary), adoptType(t.indices) as arrow.Int32, t.id, t.isOrdered);
    default:
      throw new InvalidInputError(
        `invalid input: Arrow type ${String(t)} (type id ${t.typeId}) from another copy of apache-arrow is not taken; pass Arrow IPC bytes (tableToIPC of your copy)`,
      );
  }
}
