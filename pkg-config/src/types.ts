// The public shapes of the API. The engine hands them out as they are (its wire types,
// src/api/wire.rs); wire-check.ts makes `tsc` compare them with the generated declarations.

import type { MetadataCache } from './metadata-cache.js';

/** What a long operation has cost so far. */
export interface Progress {
  /** Storage requests issued (gets, heads, lists). */
  requests: number;
  /** Bytes received. */
  bytes: number;
  /** File slices (a base file and its log files) read completely; in a change feed, file-group
   *  changes (one commit's changes to one file group). */
  filesDone: number;
  /** File slices (or file-group changes) the operation will read (0 until planning is done). */
  filesTotal: number;
}

/** `HudiTable.refresh()`'s options. */
export interface RefreshOptions extends Cancellable {
  /** Also reads what the next write reads first (the latest schema and the metadata
   *  table's partition listings), on a table open over a storage that takes writes. */
  forWrite?: boolean;
}

export interface Cancellable {
  /** Aborts the operation: it rejects with an `AbortedError` (`name` `'AbortError'`, or
   *  `'TimeoutError'` for `AbortSignal.timeout()`; `cause`: `signal.reason`) and its requests
   *  are cancelled. */
  signal?: AbortSignal;
  /** Called as the operation advances (opened, planned, each batch read), with running totals
   *  for this operation. */
  onProgress?: (progress: Progress) => void;
}

export interface S3Options {
  region?: string;
  /** e.g. `http://127.0.0.1:9000` for an S3-compatible server. */
  endpoint?: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  sessionToken?: string;
  /** `https://endpoint/bucket/key` instead of `https://bucket.endpoint/key`. */
  forcePathStyle?: boolean;
}

export interface OpenOptions extends Cancellable {
  /** A custom `fetch` (auth, caching, logging); defaults to the global one. */
  fetch?: typeof fetch;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
  /** S3 settings for `s3://bucket/prefix` URLs. */
  s3?: S3Options;
  /** For `s3://` tables: returns a presigned URL for `method` on `key` (the object key in the
   *  bucket), e.g. asked of your server, so that no secret reaches the client. `LIST` asks for a
   *  ListObjectsV2 request on the bucket for the key prefix `key` (`page`: its delimiter and
   *  continuation token). */
  presign?: (method: 'GET' | 'HEAD' | 'LIST' | 'PUT' | 'DELETE', key: string, page?: { delimiter?: string; continuationToken?: string }) => string | Promise<string>;
  /** How an `http(s)://` table is listed: `'auto'` (default: its manifest
   *  `.hoodie/hudi-edge-manifest.json` when it has one, else the host's JSON directory index),
   *  `'manifest'`, `'autoindex'` (nginx `autoindex_format json`; Copy-On-Write tables only: it
   *  hides dot-files) or `'s3'` (ListObjectsV2 on an S3-compatible endpoint). */
  listing?: 'auto' | 'manifest' | 'autoindex' | 's3';
  /** Requests in flight at most (default 8). */
  concurrency?: number;
  /** Retries of a failed request (5xx, network) with backoff (default 2). */
  retries?: number;
  /** Metadata-table files kept across opens (see `MetadataCache`): keep one at module level
   *  in a worker and pass it to every open. Without it, files are kept for this handle only. */
  cache?: MetadataCache;
  /** Also ask for the metadata table's `hoodie.properties` and listing in the open's round
   *  trip: two requests more at the open (spent even when the table has no metadata table),
   *  and a query planned from the metadata table (record index, statistics) then reaches its
   *  rows one round trip sooner. For handles opened to query; a timeline view does not need it. */
  prefetchMetadataTable?: boolean;
  /** The zone of the timeline's clock when the table's `hoodie.table.timeline.timezone` is
   *  `LOCAL` (Hudi's default: the writer's local zone): an IANA name such as
   *  `'America/New_York'`. Default `'UTC'`, whatever the host's zone (Node's `TZ` never
   *  changes a result). `asOf` / `start` / `end` given as `Date`s or ISO-8601 times with an
   *  offset are read in it; instants and times without an offset are that clock already.
   *  Ignored on `UTC` timelines. */
  timeZone?: string;
}

export interface StorageOpenOptions extends Cancellable {
  /** Metadata-table files kept across opens (see `MetadataCache`), e.g. over an R2 binding. */
  cache?: MetadataCache;
  /** As `OpenOptions.prefetchMetadataTable`. */
  prefetchMetadataTable?: boolean;
  /** The zone of the timeline's clock when the table's `hoodie.table.timeline.timezone` is
   *  `LOCAL` (Hudi's default: the writer's local zone): an IANA name such as
   *  `'America/New_York'`. Default `'UTC'`, whatever the host's zone (Node's `TZ` never
   *  changes a result). `asOf` / `start` / `end` given as `Date`s or ISO-8601 times with an
   *  offset are read in it; instants and times without an offset are that clock already.
   *  Ignored on `UTC` timelines. */
  timeZone?: string;
}

export interface MetadataCacheOptions {
  /** Byte budget (default 16 MiB; 0 keeps nothing). Least recently used files go first. */
  maxBytes?: number;
}

export interface MetadataCacheStats {
  /** The byte budget. */
  maxBytes: number;
  /** Bytes held now, in how many files. */
  bytes: number;
  files: number;
  /** Reads answered from the cache, and reads of listed metadata files it could not answer. */
  hits: number;
  misses: number;
  /** Bytes answered from the cache. */
  hitBytes: number;
  /** Files a write put into the cache as it wrote them. */
  written: number;
  /** Files dropped for the budget, or because a listing showed another version of them. */
  evicted: number;
}

export type QueryType = 'snapshot' | 'read_optimized' | 'incremental';
export type FilterOp = '=' | '!=' | '<' | '<=' | '>' | '>=' | 'in' | 'not in' | 'is null' | 'is not null';
/** `[column, op, value]`, or a string `"col op value"` (also `and` / `or`). */
export type Filter = [string, FilterOp | string, unknown?] | string;

export interface ReadOptions extends Cancellable {
  query?: QueryType;
  /** Time travel: an instant (`yyyyMMddHHmmssSSS`), ISO-8601 time or `Date`. */
  asOf?: string | Date;
  /** Incremental: changes after `start` ... */
  start?: string | Date;
  /** ... up to and including `end`. */
  end?: string | Date;
  columns?: string[];
  /** ANDed together. Values as `rows()` gives them (a `Date` is taken as its ISO-8601 time). */
  filters?: Filter[];
  limit?: number;
  /** Use statistics (partition stats, column stats, record index) to skip files (default true). */
  dataSkipping?: boolean;
  /** Plan from the metadata table when the table has one (default true). */
  useMetadataTable?: boolean;
  /** Rows per Arrow batch. */
  batchSize?: number;
  /** File slices read at once (default 8); more start early while small, see `readAheadBytes`. */
  concurrency?: number;
  /** Slices beyond `concurrency` start early while the base files being read alone stay
   *  within this many bytes (default 32 MiB; 0: never), up to 64 and no more than the
   *  storage sends at once (an opened URL's `concurrency`, default 8; a JS storage has no
   *  limit); slices merged with log files never do, nor any under a `limit`. A selective
   *  query over a hundred small files then waits a few round trips, not a dozen. Files the
   *  column statistics expect to match few rows count what they fetch (not their footers'
   *  bloom filters) and that share of their rows, up to 128 at once. */
  readAheadBytes?: number;
}

export type InstantState = 'requested' | 'inflight' | 'completed';

export interface Instant {
  requestedTime: string;
  /** Completion time (v8+: from the file name; v6: the file's modification time). */
  completionTime: string | null;
  /** The action of the instant's current state (a finished compaction is a `commit`). */
  action: string;
  /** What it was requested as (`compaction`, `clustering`, or the same as `action`). */
  requestedAction: string;
  state: InstantState;
  /** The write operation (`INSERT`, `UPSERT`, `BULK_INSERT`, `DELETE`, `CLUSTER`, `COMPACT` ...),
   *  from the commit metadata; null for non-write actions and when not loaded. */
  operation: string | null;
  /** Whether it comes from the archive (v6) or the LSM history (v8+). */
  archived: boolean;
  /** `file_name`, `file_modification_time` or `archive`. */
  completionSource: string | null;
  /** The timeline file carrying its current state ('' for archived instants). */
  file: string;
}

export interface TimelineOptions extends Cancellable {
  /** Load the archived timeline (v6) / LSM history (v8+) too. */
  archived?: boolean;
  /** Fill `operation` from each write instant's metadata (one request per instant, concurrent;
   *  default true). */
  operations?: boolean;
}

export interface TableInfo {
  name: string;
  database: string | null;
  /** `COPY_ON_WRITE` or `MERGE_ON_READ`. */
  type: string;
  version: number;
  baseFileFormat: string;
  recordKeyFields: string[];
  partitionFields: string[];
  orderingFields: string[];
  keyGenerator: string | null;
  hiveStylePartitioning: boolean;
  populateMetaFields: boolean;
  mergeMode: string | null;
  /** Number of partitions in the latest snapshot. */
  partitionCount: number;
  /** Number of file groups in the latest snapshot. */
  fileGroupCount: number;
  /** Bytes of the latest file slices. */
  totalBytes: number;
  /** Completed metadata-table partitions (`files`, `column_stats`, `partition_stats`, `record_index` ...). */
  metadataPartitions: string[];
  metadataPartitionsInflight: string[];
  timezone: string | null;
  /** `hoodie.properties` as is. */
  properties: Record<string, string>;
}

export interface WrittenFile {
  partition: string;
  fileId: string;
  /** Relative to the base path. */
  path: string;
  kind: 'base' | 'log';
  bytes: number;
  inserted: number;
  updated: number;
  deleted: number;
  writes: number;
  prevCommit: string | null;
}

export interface SchemaField {
  name: string;
  type: string;
  nullable: boolean;
}

export interface CommitDetail {
  instant: Instant;
  operation: string | null;
  partitions: string[];
  files: WrittenFile[];
  /** Records inserted, updated and deleted (as `CommitResult` counts them). */
  inserted: number;
  updated: number;
  deleted: number;
  writes: number;
  bytes: number;
  /** Replaced file groups (replacecommit / clustering / insert overwrite). */
  replacedFileGroups: { partition: string; fileId: string }[];
  /** The writer's schema (Avro) as fields, when the commit carries one. */
  schema: SchemaField[] | null;
  extraMetadata: Record<string, string>;
  /** The instant's content as Hudi wrote it (commit metadata, clean / rollback / compaction plans ...). */
  raw: unknown;
}

export interface BaseFile {
  name: string;
  size: number;
  instant: string;
}

export interface LogFile {
  name: string;
  size: number;
  instant: string;
  version: number;
  completionTime: string | null;
}

export interface FileSlice {
  baseInstant: string;
  baseFile: BaseFile | null;
  logFiles: LogFile[];
  /** Base plus logs. */
  size: number;
}

export interface FileGroup {
  fileId: string;
  /** Oldest first; the last one is the latest. */
  slices: FileSlice[];
}

export interface PartitionLayout {
  partition: string;
  fileGroups: FileGroup[];
}

export interface FileLayout {
  partitions: PartitionLayout[];
  /** File groups replaced by clustering / insert overwrite and no longer visible. */
  replacedGroups: number;
  /** Files on storage the view left out, and why. */
  skipped: unknown[];
}

export interface PlannedSlice {
  partition: string;
  fileId: string;
  baseInstant: string;
  baseFile: string | null;
  logFiles: string[];
}

export interface PlanStats {
  partitionsTotal: number;
  partitionsAfterPruning: number;
  filesTotal: number;
  filesAfterPartitionPruning: number;
  filesAfterPartitionStats?: number;
  filesAfterColumnStats?: number;
  filesAfterRecordIndex?: number;
  /** After the secondary indexes (`=` / `in` on an indexed column), when one was used. */
  filesAfterSecondaryIndex?: number;
  filesAfterFileStats: number;
  filesSelected: number;
  slicesTotal: number;
  slicesSelected: number;
  /** `listing`, `metadata_table` or `timeline`. */
  planningSource: string;
  planningNotes: string[];
  filesIgnored: number;
  [more: string]: unknown;
}

export interface IoStats {
  requests: number;
  bytes: number;
  gets: number;
  heads: number;
  lists: number;
  puts: number;
  deletes: number;
  /** Dependent round trips (concurrent requests share one). */
  roundTrips: number;
  /** Requests and bytes by why they were made: `timeline`, `footer`, `column_chunk`, ... */
  byPurpose?: Record<string, { requests: number; bytes: number }>;
  /** What the storage noticed and worked around (e.g. a server that ignores `Range`). */
  warnings: string[];
}

export interface Plan {
  query: QueryType;
  asOf: string | null;
  start: string | null;
  end: string | null;
  fileSlices: PlannedSlice[];
  stats: PlanStats;
  /** What planning cost. */
  io: IoStats;
  /** Wall-clock milliseconds, measured in JS. */
  timeMs: number;
}

/** Options of a change-feed query: the commits requested in `(start, end]`. */
export interface ChangeOptions extends Cancellable {
  /** Changes after this instant (`yyyyMMddHHmmssSSS`, ISO-8601 time or `Date`); all when absent. */
  start?: string | Date;
  /** ... up to and including this one; the latest when absent. */
  end?: string | Date;
}

/** One changed record, as Apache Hudi's Spark CDC query returns it. */
export interface Change {
  /** `i` insert, `u` update, `d` delete. */
  op: 'i' | 'u' | 'd';
  /** The requested time of the commit that made the change (Spark's `ts_ms`). */
  tsMs: string;
  /** The commit (its requested time). */
  instant: string;
  /** The record before the change (`null` for inserts), parsed from Spark's JSON image: null
   *  fields left out, dates as days, timestamps as microseconds, and decimals as Spark shows
   *  them (`{ zero: boolean }`; read the table for their values). Images read from the CDC log
   *  files as written are Avro's rendering instead: null fields present, decimals as bytes. */
  before: Record<string, unknown> | null;
  /** The record after the change (`null` for deletes), as `before`. */
  after: Record<string, unknown> | null;
}

/** One commit's changes to one file group, and the files they are read from. */
export interface ChangeSplit {
  instant: string;
  /** `AS_IS` (CDC log files), `BASE_FILE_INSERT`, `BASE_FILE_DELETE`, `LOG_FILE` (merged with
   *  the slice before) or `REPLACE_COMMIT`. */
  case: string;
  partition: string;
  fileId: string;
  files: string[];
  /** The slice before the commit (base file, then log files), where read. */
  before: string[];
  /** The slice after the commit, where read. */
  after: string[];
}

/** Which commits of a range changed which file groups (`changePlan()`). */
export interface ChangePlan {
  /** `hoodie.table.cdc.supplemental.logging.mode` as `hoodie.properties` holds it
   *  (`OP_KEY_ONLY`, `DATA_BEFORE`, `DATA_BEFORE_AFTER`). */
  mode: string;
  /** Requested times of the range's commits that changed data, oldest first. */
  instants: string[];
  splits: ChangeSplit[];
  io: IoStats;
}

/** What a change-feed read returned and cost. */
export interface ChangeStats {
  rows: number;
  /** Rows by operation (`i`, `u`, `d`). */
  operations: Record<string, number>;
  instants: number;
  /** File-group changes read, by where they came from. */
  splits: Record<string, number>;
  planIo: IoStats;
  readIo: IoStats;
}

export type Row = Record<string, unknown>;

export type WriteOperation = 'upsert' | 'insert' | 'delete';

export interface WriteOptions {
  /** `upsert` updates keys that exist and inserts the rest; `insert` inserts (a key that exists
   *  is updated); `delete` deletes the keys (only key and partition columns are needed). */
  operation: WriteOperation;
  /** Hudi write configs by their Java names (`hoodie.*`), e.g.
   *  `hoodie.parquet.compression.codec`. A table with Hudi's bucket index needs the settings
   *  its writers use, which `hoodie.properties` does not hold: `hoodie.index.type: 'BUCKET'`,
   *  `hoodie.bucket.index.num.buckets` (and `hoodie.bucket.index.hash.field` when it is not
   *  the record key); without them such a table is refused (`INVALID_ARGUMENT`). */
  options?: Record<string, string>;
  /** Multi-writer (`options` with `hoodie.write.concurrency.mode=optimistic_concurrency_control`):
   *  times a commit that lost a conflict is tried again on the new snapshot (default 0). */
  commitRetries?: number;
  /** Columns the table lacks are added to its schema (see `WriteJobOptions.addColumns`). */
  addColumns?: boolean;
  /** The table services are left to `runServices()` (see `WriteJobOptions.deferServices`). */
  deferServices?: boolean;
  /** Aborts the write at its next request. Before the commit point nothing is visible to
   *  readers; after it, open the table again to see whether the commit landed (a table is not
   *  refreshed after a failed write). */
  signal?: AbortSignal;
}

/** An apache-arrow `Table` of any version or build (another copy's is rebuilt from the
 *  package's classes before it is written). */
export interface ArrowTableLike {
  readonly schema: { readonly fields: readonly unknown[] };
  readonly batches: readonly unknown[];
}

/** An apache-arrow `RecordBatch` of any version or build. */
export interface ArrowRecordBatchLike {
  readonly schema: { readonly fields: readonly unknown[] };
  readonly data: unknown;
  readonly numRows: number;
}

/** An apache-arrow `Schema` of any version or build. */
export interface ArrowSchemaLike {
  readonly fields: readonly unknown[];
}

/** A new table (`HudiTable.create`): table version 9, Parquet base files, Hudi's meta
 *  fields, and the metadata table Spark 1.1 gives a new table (see `options`). */
export interface NewTableSpec {
  /** `hoodie.table.name` (letters, digits, `_`); by default the location's last path segment. */
  name?: string;
  /** `COPY_ON_WRITE` (`cow`, the default) or `MERGE_ON_READ` (`mor`). */
  type?: 'COPY_ON_WRITE' | 'MERGE_ON_READ' | 'cow' | 'mor';
  /** The columns: a Spark SQL column list (`id BIGINT NOT NULL, amount DECIMAL(12,2),
   *  placed TIMESTAMP, tags ARRAY<STRING>`), or an apache-arrow `Schema` (or a `Table` /
   *  `RecordBatch`, whose schema is taken; `_hoodie_*` columns are left out). Columns are
   *  nullable unless `NOT NULL`; timestamps are Spark's `TIMESTAMP` (UTC microseconds). */
  columns: string | import('apache-arrow').Schema | ArrowSchemaLike | ArrowTableLike | ArrowRecordBatchLike;
  /** Record key field(s). */
  recordKey: string | string[];
  /** Partition field(s); none for a non-partitioned table. */
  partitionBy?: string | string[];
  /** Ordering (precombine) field(s): the larger value wins a merge (`EVENT_TIME_ORDERING`);
   *  without them the latest commit wins (`COMMIT_TIME_ORDERING`). */
  orderingFields?: string | string[];
  /** Table configs by their Java names: `hoodie.datasource.write.hive_style_partitioning`,
   *  `hoodie.datasource.write.partitionpath.urlencode`, `hoodie.table.timeline.timezone`
   *  (`UTC` here by default), `hoodie.database.name` and `hoodie.populate.meta.fields`
   *  (`false`: keys from the key fields); `hoodie.metadata.*` choose the metadata table's
   *  partitions (Spark's by default; `hoodie.metadata.record.index.enable=true` adds the
   *  record index, `hoodie.metadata.enable=false` builds none); others are refused. */
  options?: Record<string, string>;
}

/** Rows handed to `write()`: an apache-arrow `Table` or `RecordBatch` (from any copy of
 *  apache-arrow), Arrow IPC bytes, or plain objects. */
export type WriteRows = import('apache-arrow').Table | import('apache-arrow').RecordBatch | ArrowTableLike | ArrowRecordBatchLike | Uint8Array | Row[];

export interface WriteRecords {
  inserted: number;
  updated: number;
  deleted: number;
  /** Deletes of keys the table does not hold (no-ops). */
  deleteMissing: number;
  /** Input rows dropped because another row with the same key won. */
  deduplicated: number;
}

export interface MetadataTableWrite {
  /** Metadata-table partitions that got records in this commit. */
  partitions: string[];
  /** The metadata-table compaction instant run before the write, if any. */
  compaction: string | null;
}

export interface WriteResult {
  /** The commit's requested time. */
  instant: string;
  completionTime: string;
  /** `commit` (Copy-On-Write) or `deltacommit` (Merge-On-Read). */
  action: string;
  operation: WriteOperation;
  records: WriteRecords;
  /** Data files written, relative to the base path. */
  filesWritten: string[];
  metadataTable: MetadataTableWrite;
  /** Failed writes rolled back (their instants): before this one, or by its automatic clean
   *  after it (a single writer under `hoodie.cleaner.policy.failed.writes=LAZY`). */
  rolledBack: string[];
  /** Tries the commit took: more than 1 when a lost conflict was retried (`commitRetries`). */
  attempts: number;
  /** What the write cost. */
  io: IoStats;
  /** Cleans run after the commit (the data table's, the metadata table's own). */
  clean: CleanResult[];
  /** Services that failed after the commit (the commit stands). */
  serviceErrors: ServiceError[];
  /** Archival run after the commit, when it moved anything. */
  archival: ArchiveResult | null;
  /** Merge-On-Read compaction run after the commit, when one was due or pending. */
  compaction: CompactReport | null;
  /** Clustering run after the commit, when one was due or pending. */
  clustering: ClusterReport | null;
  /** Requests after the commit: deciding whether a service is due, and running it. */
  servicesIo: IoStats;
}

/** A table service that failed after a commit (the commit stands; the next write or clean
 *  finishes what it left). */
export interface ServiceError {
  service: string;
  code: string;
  message: string;
}

/** One clean (`clean()`, or after a write), as Apache Hudi 1.1's cleaner records it. */
export interface CleanResult {
  /** `data`, or `metadata` for the metadata table's own clean. */
  table: 'data' | 'metadata';
  instant: string;
  completionTime: string;
  /** It finished a clean an earlier run (ours or Spark's) left pending. */
  resumed: boolean;
  policy: string;
  /** The retain point (empty under KEEP_LATEST_FILE_VERSIONS). */
  earliestCommitToRetain: string;
  filesDeleted: number;
  /** Planned files that were already gone. */
  filesMissing: number;
  /** Bytes of the deleted files as listed when planned. */
  bytesFreed: number;
  partitions: number;
  io: IoStats;
  elapsedMs: number;
}

/** What `clean()` has done so far. */
export interface CleanProgress {
  /** `cleaning`: the engine's requests (reported as they change, at most every 50 ms);
   *  `cleaned`: done. */
  phase: 'cleaning' | 'cleaned';
  requests: number;
  bytes: number;
  puts: number;
}

export interface CleanOptions {
  /** `hoodie.clean.*` settings (policy, retained commits, …) and lock configs. */
  options?: Record<string, string>;
  /** Aborts the clean at its next request; a clean already recorded stays pending and the
   *  next clean (or write) finishes it from its plan. */
  signal?: AbortSignal;
  onProgress?: (progress: CleanProgress) => void;
}

/** What `upsert` / `insert` / `delete` have done so far. */
export interface WriteProgress {
  /** `checking`: rows checked against the table's schema (no request yet); `writing`: the
   *  engine's requests (reported as they change, at most every 50 ms); `rolling-back`: an
   *  aborted write undoing its own instant; `committed`: done. */
  phase: 'checking' | 'writing' | 'rolling-back' | 'committed';
  /** Requests and bytes of this write so far, and of them the writes (`PUT`s). */
  requests: number;
  bytes: number;
  puts: number;
}

export interface WriteJobOptions {
  /**
   * Aborts the write. Aborted before its commit point (the completed instant created on
   * storage) it rejects with an `AbortedError`: readers never saw it, and the instant it
   * requested is rolled back before the promise settles (on a single-writer table; with a
   * multi-writer or `LAZY` setup it is left, named in `pending`, for Hudi's lazy cleaning).
   * Aborted after the commit point it resolves with the commit (`abortedAfterCommit: true`).
   */
  signal?: AbortSignal;
  onProgress?: (progress: WriteProgress) => void;
  /** Times a commit that lost to a concurrent writer is tried again on the new snapshot
   *  (default 0). It applies under a multi-writer mode (`options` with
   *  `hoodie.write.concurrency.mode: 'optimistic_concurrency_control'` and
   *  `hoodie.write.lock.provider` Hudi's `StorageBasedLockProvider`); a single writer that
   *  meets another's instant fails with a `ConflictError` whatever it says. */
  commitRetries?: number;
  /** Hudi write configs by their Java names (`hoodie.*`). */
  options?: Record<string, string>;
  /** Columns of the rows the table lacks are added to its schema (nullable, after the
   *  others; older rows read them as null) instead of refused, as a Spark write of a wider
   *  DataFrame does. Their types come from the rows: an apache-arrow `Table` or
   *  `RecordBatch` (plain objects cannot say whether `1` is an int, a long or a double, so
   *  they cannot add columns). Default false: rows from elsewhere do not change the schema. */
  addColumns?: boolean;
  /** The write answers at its commit point and leaves the table services it would run after
   *  it (cleaning, archival, inline compaction and clustering), and a metadata-table
   *  compaction that has just come due before it, to a later `runServices()` with the same
   *  `options`: an endpoint answers sooner and runs them after its answer. Default false
   *  (Hudi's order: the metadata table compacted first, the services before the write
   *  returns). */
  deferServices?: boolean;
}

/** `HudiTable.runServices()`'s options. */
export interface RunServicesOptions extends Cancellable {
  /** Hudi write configs (`hoodie.*`): which services run and their thresholds, as a write
   *  with these `options` runs them. */
  options?: Record<string, string>;
}

/** What `HudiTable.runServices()` ran: each service only when due, reported when it did
 *  something. */
export interface ServicesResult {
  cleans: CleanResult[];
  archival: ArchiveResult | null;
  compaction: CompactReport | null;
  clustering: ClusterReport | null;
  /** Failed writes the clean rolled back first (a single writer under `LAZY`). */
  rolledBack: string[];
  /** The metadata table's compaction (its instant), when it was due: a write with
   *  `deferServices` leaves it here instead of running it first. */
  metadataTableCompaction: string | null;
  /** Services that failed: the next run finishes what they left. */
  serviceErrors: ServiceError[];
  /** Requests: deciding whether each service is due, and running it. */
  io: IoStats;
}

/** One committed write (`upsert`, `insert` or `delete`). */
export interface CommitResult {
  /** The commit's requested time. */
  instant: string;
  completionTime: string;
  /** `commit` (Copy-On-Write) or `deltacommit` (Merge-On-Read). */
  action: string;
  operation: WriteOperation;
  inserted: number;
  updated: number;
  deleted: number;
  /** Data files written, relative to the base path. */
  filesWritten: string[];
  /** What the write cost (requests, bytes, round trips, by purpose). */
  io: IoStats;
  /** Deletes of keys the table does not hold (no-ops), and input rows dropped because a row
   *  with the same key won (absent when the commit was found after an abort). */
  deleteMissing?: number;
  deduplicated?: number;
  /** Metadata-table partitions the commit updated. */
  metadataPartitions: string[];
  /** The metadata-table compaction the write ran first (every
   *  `hoodie.metadata.compact.max.delta.commits` writes), if any. */
  metadataTableCompaction?: string | null;
  /** Tries the commit took: more than 1 when a lost conflict was retried (`commitRetries`;
   *  absent when the commit was found after an abort). */
  attempts?: number;
  /** Failed writes (of crashed or aborted writers) this one rolled back first. */
  rolledBack?: string[];
  /** The table services run after the commit — cleans (`hoodie.clean.automatic`), archival
   *  (`hoodie.archive.automatic`), Merge-On-Read compaction (`hoodie.compact.inline`), each
   *  on by default, and clustering (`hoodie.clustering.inline`, off by default), reported
   *  when it did something — and failures among them (the commit stands); absent when the
   *  commit was found after an abort. */
  cleans?: CleanResult[];
  archival?: ArchiveResult | null;
  compaction?: CompactReport | null;
  clustering?: ClusterReport | null;
  serviceErrors?: ServiceError[];
  /** The signal fired after the commit point: the commit landed (counts from its metadata). */
  abortedAfterCommit?: boolean;
}

/** Keys to delete: objects with the record key and partition fields (and the ordering field
 *  when the table has one); whole rows are accepted. */
export type DeleteKeys = import('apache-arrow').Table | import('apache-arrow').RecordBatch | ArrowTableLike | ArrowRecordBatchLike | Row[];

/** The storage-based lock (`.hoodie/.locks/table_lock.json`, Hudi's conditional-write lock
 *  provider), as stored. */
export interface StorageLock {
  /** Who holds it (`owner` in the file). */
  owner: string | null;
  /** Epoch milliseconds the holder's lease runs to. */
  validUntil: number | null;
  /** Whether the holder released it (`expired` in the file) or its lease ran out by now. */
  expired: boolean;
  /** The file as stored. */
  raw: unknown;
}

export interface Heartbeat {
  /** The instant the writer works on (`.hoodie/.heartbeat/<instant>`). */
  instant: string;
  /** Epoch milliseconds of its last beat (the file's modification time), when known. */
  lastBeat: number | null;
}

/** Which metadata-table partitions {@link HudiTable.index} builds. */
export interface IndexOptions {
  /** `files`, `column_stats` (with `partition_stats` when partitioned), `record_index`; none:
   *  Spark's defaults. */
  partitions?: string[];
  /** `hoodie.metadata.*` settings and lock configs. */
  options?: Record<string, string>;
}

/** What {@link HudiTable.index} built: one metadata-table delta commit per partition. */
export interface IndexResult {
  partitions: { partition: string; instant: string; fileGroups: number; records: number }[];
  requests: number;
  bytes: number;
  elapsedMs: number;
}

/** Settings of {@link HudiTable.compact}. */
export interface CompactOptions extends Cancellable {
  /** Hudi write configs: `hoodie.compaction.*`, lock configs. */
  options?: Record<string, string>;
  /** Write the plan (`<t>.compaction.requested`) and leave it for a later run. */
  scheduleOnly?: boolean;
  /** Execute this pending compaction only. */
  instant?: string;
}

/** One compaction executed and committed. */
export interface CompactionResult {
  instant: string;
  completionTime: string;
  /** Scheduled by this run (else a plan found pending: ours, or another writer's). */
  scheduledHere: boolean;
  fileGroups: number;
  logFiles: number;
  /** New base files, relative to the base path. */
  filesWritten: string[];
  recordsWritten: number;
  bytesWritten: number;
  io: IoStats;
  elapsedMs: number;
}

/** What {@link HudiTable.compact} did. */
export interface CompactReport {
  /** Compactions committed, oldest first: pending plans before a new one. */
  completed: CompactionResult[];
  /** A plan written and left for a later run (schedule only). */
  scheduled: string | null;
  /** Why no new plan was written. */
  notScheduled: string | null;
  io: IoStats;
  elapsedMs: number;
}

/** Settings of {@link HudiTable.cluster}. */
export interface ClusterOptions extends Cancellable {
  /** Hudi write configs: `hoodie.clustering.*`, lock configs. */
  options?: Record<string, string>;
  /** Write the plan (`<t>.clustering.requested`) and leave it for a later run. */
  scheduleOnly?: boolean;
  /** Execute this pending clustering only. */
  instant?: string;
}

/** One clustering executed and committed. */
export interface ClusteringResult {
  instant: string;
  completionTime: string;
  /** Scheduled by this run (else a plan found pending: ours, or another writer's). */
  scheduledHere: boolean;
  groups: number;
  /** File groups replaced, as `partition/fileId`. */
  fileGroupsReplaced: string[];
  bytesReplaced: number;
  /** New base files, relative to the base path. */
  filesWritten: string[];
  recordsWritten: number;
  bytesWritten: number;
  io: IoStats;
  elapsedMs: number;
}

/** What {@link HudiTable.cluster} did. */
export interface ClusterReport {
  /** Clusterings committed, oldest first. */
  completed: ClusteringResult[];
  /** A plan written and left for a later run (schedule only). */
  scheduled: string | null;
  /** Why no new plan was written. */
  notScheduled: string | null;
  io: IoStats;
  elapsedMs: number;
}

/** Settings of {@link HudiTable.archive}. */
export interface ArchiveOptions extends Cancellable {
  /** Hudi write configs: `hoodie.keep.min.commits`, `hoodie.keep.max.commits`, the cleaner's
   *  retention, lock configs. */
  options?: Record<string, string>;
}

/** What {@link HudiTable.archive} moved from one timeline to its LSM history. */
export interface TimelineArchived {
  /** Requested times, oldest first. */
  instants: string[];
  /** The history file they went to, relative to the base path. */
  historyFile: string;
  /** History files written by merging a layer into the next. */
  mergedInto: string[];
  filesDeleted: number;
}

/** What {@link HudiTable.archive} did: each timeline's part, `null` where nothing was due. */
export interface ArchiveResult {
  dataTable: TimelineArchived | null;
  metadataTable: TimelineArchived | null;
  requests: number;
  bytes: number;
  elapsedMs: number;
}

/** What concurrent writers leave on storage: the lock and their heartbeats. */
export interface WriterState {
  lock: StorageLock | null;
  heartbeats: Heartbeat[];
}

/** A file an instant wrote into the metadata table. */
export interface MetadataTableFile {
  /** `files`, `column_stats`, `record_index`, ... */
  partition: string;
  /** Relative to the data table's base path. */
  path: string;
  size: number;
}

export interface ManifestOptions extends Cancellable {
  /** Store the manifest in the table (default); `false` only returns it. */
  write?: boolean;
}

export interface ManifestResult {
  /** `.hoodie/hudi-edge-manifest.json`, relative to the table's base path. */
  path: string;
  /** Whether it was stored in the table. */
  written: boolean;
  /** Files it lists. */
  files: number;
  /** The latest completed instant it saw. */
  latestInstant: string | null;
  /** The manifest's JSON, as stored. */
  json: Uint8Array;
}

/** Settings of {@link HudiTable.health} and {@link HudiTable.fix}. */
export interface HealthOptions extends Cancellable {
  /** The write configs the table's writers use (`hoodie.*`): the thresholds and services the
   *  report judges by (Hudi's defaults otherwise). */
  options?: Record<string, string>;
}

/** One finding of a health report, naming what fixes it. */
export interface Finding {
  /** `COMPACTION_BACKLOG`, `SMALL_FILES`, `CLEAN_LAG`, `ARCHIVAL_LAG`, `FAILED_WRITES`,
   *  `STALE_LOCK`, `LOCK_HELD`, `MDT_LAG`, `MDT_MISSING`, `MDT_BUILDING`,
   *  `MDT_COMPACTION_BACKLOG`, `PARTITION_SKEW`. */
  code: string;
  severity: Severity;
  message: string;
  /** The numbers behind it (snake_case keys, as the CLI prints them). */
  evidence: Record<string, unknown>;
  /** The service or setting that fixes it, in words. */
  fix: string;
  /** The table service {@link HudiTable.fix} runs for it (`compact`, `clean`, `archive`,
   *  `rollback`, `index`, `cluster`, `lock`), or null when none does. */
  service: string | null;
}

export type Severity = 'info' | 'warning' | 'critical';

/** Bytes and files of one partition's latest file slices. */
export interface PartitionSize {
  partition: string;
  fileGroups: number;
  baseFiles: number;
  bytes: number;
  smallBaseFiles: number;
  logFiles: number;
}

/** An instant that has not completed. */
export interface PendingInstant {
  requestedTime: string;
  /** What it was requested as (`deltacommit`, `compaction`, `clustering` …). */
  action: string;
  state: string;
  ageSecs: number | null;
  /** Seconds since its writer's last heartbeat; null without a heartbeat file. */
  heartbeatAgeSecs: number | null;
  /** A write whose writer is gone (the next write rolls it back). */
  failed: boolean;
}

export interface CompactionHealth {
  deltaCommitsSinceCompaction: number;
  maxDeltaCommits: number;
  /** The compaction trigger's answer now. */
  due: boolean;
  reason: string | null;
  pending: PendingInstant[];
}

export interface CleanHealth {
  policy: string;
  lastClean: string | null;
  lastCleanAgeSecs: number | null;
  due: boolean;
  earliestCommitToRetain: string | null;
  filesBeyondRetention: number;
  slicesBeyondRetention: number;
  bytesBeyondRetention: number;
  pending: boolean;
}

export interface ArchivalHealth {
  keepMinCommits: number;
  keepMaxCommits: number;
  activeCommits: number;
  instantsToArchive: number;
  metadataTableInstantsToArchive: number;
  lastArchivalMs: number | null;
}

export interface LockHealth {
  owner: string;
  validUntilMs: number;
  expired: boolean;
  live: boolean;
  /** Never released and past its validity: its owner died holding it. */
  stale: boolean;
}

export interface MetadataTableHealth {
  present: boolean;
  partitions: string[];
  configured: string[];
  missing: string[];
  building: string[];
  /** Completed data-table instants the metadata table lacks. */
  lagInstants: number;
  latestInstant: string | null;
  logFiles: number;
  maxLogFilesPerSlice: number;
  deltaCommitsSinceCompaction: number;
  maxDeltaCommits: number;
}

export interface HourActivity {
  hourMs: number;
  commits: number;
  rows: number;
  bytes: number;
}

export interface Activity {
  commitsLastDay: number;
  commitsLastWeek: number;
  commitsRead: number;
  rowsInserted: number;
  rowsUpdated: number;
  rowsDeleted: number;
  bytesWritten: number;
  /** The last 24 hours, oldest first. */
  hourly: HourActivity[];
}

/** {@link HudiTable.health}: the table's health from its timeline, listings and instant
 *  files (no data block read). The CLI's `health --json` has the same fields in snake_case. */
export interface Health {
  table: string;
  location: string;
  tableType: string;
  version: number;
  nowMs: number;
  partitions: number;
  fileGroups: number;
  replacedFileGroups: number;
  baseFiles: number;
  baseBytes: number;
  smallFileLimit: number;
  smallBaseFiles: number;
  smallBaseShare: number;
  partitionSkew: number | null;
  partitionSizes: PartitionSize[];
  logFiles: number;
  logBytes: number;
  slicesWithLogs: number;
  maxLogFilesPerSlice: number;
  p50LogFilesPerSlice: number;
  maxLogBytesPerSlice: number;
  p50LogBytesPerSlice: number;
  /** Merge-On-Read tables only. */
  compaction: CompactionHealth | null;
  pendingInstants: PendingInstant[];
  failedWrites: number;
  rollbacks: number;
  activeTimelineInstants: number;
  clean: CleanHealth;
  archival: ArchivalHealth;
  lock: LockHealth | null;
  metadataTable: MetadataTableHealth;
  activity: Activity;
  findings: Finding[];
  notes: string[];
  io: IoStats;
}

/** One table service {@link HudiTable.fix} ran. */
export interface FixOutcome {
  code: string;
  service: string;
  ok: boolean;
  /** The service's own report. */
  result: unknown;
  error: string | null;
}

/** What {@link HudiTable.fix} did: the report before, the services run, the report after. */
export interface FixReport {
  before: Health;
  fixes: FixOutcome[];
  after: Health;
}

/** Settings of `discover()`: the search's limits, and the health reports' settings. */
export interface DiscoverOptions extends OpenOptions {
  /** Folders below the location searched at most (6). */
  maxDepth?: number;
  /** Folder listings at most (2000). */
  maxListings?: number;
  /** Objects and folders seen at most (100000). */
  maxObjects?: number;
  /** Compute each table's findings (true); false reads only its properties. */
  health?: boolean;
  /** Write configs the health reports judge by. */
  options?: Record<string, string>;
}

/** One table `discover()` found. */
export interface DiscoveredTable {
  /** The table's root: the location searched plus `path`. */
  location: string;
  path: string;
  name: string;
  tableType: string;
  version: number;
  bytes: number | null;
  fileGroups: number | null;
  lastCommit: string | null;
  /** Findings by severity. */
  severities: Record<string, number>;
  findings: Finding[];
  error: string | null;
}

/** What `discover()` found, and whether a limit stopped it. */
export interface Discovery {
  root: string;
  tables: DiscoveredTable[];
  listings: number;
  objectsSeen: number;
  truncated: boolean;
  /** Which limits were met, in words. */
  limits: string[];
}
