// From the engine's JSON (snake_case, Hudi's own metadata as written) to the package's shapes.

import type {
  CommitDetail,
  FileLayout,
  Instant,
  IoStats,
  Plan,
  SchemaField,
  TableInfo,
  WrittenFile,
} from './types.js';

type Json = Record<string, any>;

const camel = (k: string) => k.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/** Object keys to camelCase, recursively (values are left alone). */
export function camelize<T>(v: unknown): T {
  if (Array.isArray(v)) return v.map((x) => camelize(x)) as T;
  if (v && typeof v === 'object') {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [camel(k), camelize(x)])) as T;
  }
  return v as T;
}

export function instantOf(i: Json): Instant {
  return {
    requestedTime: i.requested_time,
    completionTime: i.completion_time ?? null,
    action: i.action,
    requestedAction: i.plan_action ?? i.action,
    state: i.state,
    operation: null,
    archived: Boolean(i.archived),
    completionSource: i.completion_source ?? null,
    file: i.file ?? '',
  };
}

export function ioOf(io: Json): IoStats {
  return {
    requests: io.requests ?? 0,
    bytes: io.bytes ?? 0,
    gets: io.gets ?? 0,
    heads: io.heads ?? 0,
    lists: io.lists ?? 0,
    puts: io.puts ?? 0,
    deletes: io.deletes ?? 0,
    roundTrips: io.round_trips ?? 0,
  };
}

export function planOf(p: Json, timeMs: number): Plan {
  return {
    query: p.query,
    asOf: p.as_of ?? null,
    start: p.start ?? null,
    end: p.end ?? null,
    fileSlices: (p.file_slices ?? []).map((s: Json) => ({
      partition: s.partition,
      fileId: s.file_id,
      baseInstant: s.base_instant,
      baseFile: s.base_file ?? null,
      logFiles: s.log_files ?? [],
    })),
    stats: camelize(p.stats ?? {}),
    io: ioOf(p.io ?? {}),
    timeMs,
  };
}

export function layoutOf(v: Json): FileLayout {
  const byPartition = new Map<string, FileLayout['partitions'][number]>();
  for (const g of v.groups ?? []) {
    let p = byPartition.get(g.partition);
    if (!p) byPartition.set(g.partition, (p = { partition: g.partition, fileGroups: [] }));
    p.fileGroups.push({
      fileId: g.file_id,
      slices: (g.slices ?? []).map((s: Json) => {
        const base = s.base_file ? { name: s.base_file.name, size: s.base_file.size ?? 0, instant: s.base_file.instant } : null;
        const logs = (s.log_files ?? []).map((l: Json) => ({
          name: l.name,
          size: l.size ?? 0,
          instant: l.instant,
          version: l.version,
          completionTime: l.completion_time ?? null,
        }));
        return {
          baseInstant: s.base_instant,
          baseFile: base,
          logFiles: logs,
          size: (base?.size ?? 0) + logs.reduce((n: number, l: { size: number }) => n + l.size, 0),
        };
      }),
    });
  }
  return { partitions: [...byPartition.values()], replacedGroups: v.replaced_groups ?? 0, skipped: v.skipped ?? [] };
}

export function infoOf(config: Json, layout: FileLayout): TableInfo {
  let groups = 0;
  let bytes = 0;
  for (const p of layout.partitions) {
    groups += p.fileGroups.length;
    for (const g of p.fileGroups) bytes += g.slices.at(-1)?.size ?? 0;
  }
  return {
    name: config.name,
    database: config.database ?? null,
    type: config.table_type,
    version: config.version,
    baseFileFormat: config.base_file_format,
    recordKeyFields: config.record_key_fields ?? [],
    partitionFields: config.partition_fields ?? [],
    orderingFields: config.ordering_fields ?? [],
    keyGenerator: config.key_generator ?? null,
    hiveStylePartitioning: Boolean(config.hive_style_partitioning),
    populateMetaFields: config.populate_meta_fields !== false,
    mergeMode: config.merge_mode ?? null,
    partitionCount: layout.partitions.length,
    fileGroupCount: groups,
    totalBytes: bytes,
    metadataPartitions: config.metadata_partitions ?? [],
    metadataPartitionsInflight: config.metadata_partitions_inflight ?? [],
    timezone: config.timezone ?? null,
    properties: config.properties ?? {},
  };
}

// Avro (as JSON) unwraps: archived entries and some writers wrap values as {"string": ...}.
function unwrap(v: any): any {
  if (v && typeof v === 'object' && !Array.isArray(v)) {
    const keys = Object.keys(v);
    if (keys.length === 1 && ['string', 'long', 'int', 'array', 'map', 'boolean'].includes(keys[0]!)) return v[keys[0]!];
  }
  return v;
}
const num = (v: any) => {
  const n = Number(unwrap(v));
  return Number.isFinite(n) ? n : 0;
};

function avroType(t: any): string {
  if (typeof t === 'string') return t;
  if (Array.isArray(t)) {
    const rest = t.filter((x) => x !== 'null');
    return rest.length === 1 ? avroType(rest[0]) : rest.map(avroType).join(' | ');
  }
  if (t && typeof t === 'object') {
    if (t.logicalType === 'decimal') return `decimal(${t.precision},${t.scale ?? 0})`;
    if (t.logicalType) return t.logicalType;
    if (t.type === 'array') return `array<${avroType(t.items)}>`;
    if (t.type === 'map') return `map<string, ${avroType(t.values)}>`;
    if (t.type === 'record') return `struct<${(t.fields ?? []).map((f: any) => `${f.name}: ${avroType(f.type)}`).join(', ')}>`;
    if (t.type === 'enum') return 'enum';
    return avroType(t.type);
  }
  return String(t);
}

export function schemaFields(avroJson: string | undefined | null): SchemaField[] | null {
  if (!avroJson) return null;
  try {
    const s = JSON.parse(avroJson);
    return (s.fields ?? []).map((f: any) => ({
      name: f.name,
      type: avroType(f.type),
      nullable: Array.isArray(f.type) && f.type.includes('null'),
    }));
  } catch {
    return null;
  }
}

const isLog = (path: string) => /\.log\.\d+/.test(path);

export function commitOf(instant: Instant, content: Json | null): CommitDetail {
  const c = content ?? {};
  const files: WrittenFile[] = [];
  const stats = unwrap(c.partitionToWriteStats) ?? {};
  for (const [partition, list] of Object.entries<any>(stats)) {
    for (const s0 of unwrap(list) ?? []) {
      const s = s0 ?? {};
      const path = String(unwrap(s.path) ?? '');
      files.push({
        partition,
        fileId: String(unwrap(s.fileId) ?? ''),
        path,
        kind: isLog(path) ? 'log' : 'base',
        bytes: num(s.totalWriteBytes ?? s.fileSizeInBytes),
        inserts: num(s.numInserts),
        updates: num(s.numUpdateWrites),
        deletes: num(s.numDeletes),
        writes: num(s.numWrites),
        prevCommit: (() => {
          const p = unwrap(s.prevCommit);
          return p && p !== 'null' ? String(p) : null;
        })(),
      });
    }
  }
  const replaced: CommitDetail['replacedFileGroups'] = [];
  for (const [partition, ids] of Object.entries<any>(unwrap(c.partitionToReplaceFileIds) ?? {})) {
    for (const fileId of unwrap(ids) ?? []) replaced.push({ partition, fileId: String(fileId) });
  }
  const extra: Record<string, string> = {};
  for (const [k, v] of Object.entries<any>(unwrap(c.extraMetadata) ?? {})) extra[k] = String(unwrap(v));
  const sum = (k: keyof WrittenFile) => files.reduce((n, f) => n + (f[k] as number), 0);
  const operation = unwrap(c.operationType);
  return {
    instant: { ...instant, operation: typeof operation === 'string' && operation !== 'UNKNOWN' ? operation : instant.operation },
    operation: typeof operation === 'string' ? operation : null,
    partitions: [...new Set([...files.map((f) => f.partition), ...replaced.map((r) => r.partition)])],
    files,
    inserts: sum('inserts'),
    updates: sum('updates'),
    deletes: sum('deletes'),
    writes: sum('writes'),
    bytes: sum('bytes'),
    replacedFileGroups: replaced,
    schema: schemaFields(extra.schema),
    extraMetadata: extra,
    raw: content,
  };
}
