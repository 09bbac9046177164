// Compile-time only: the engine's wire types (declarations generated from the Rust types in
// src/api/wire.rs by tsify, in wasm/hudi_edge.d.ts) must be the package's public shapes, so
// the engine's answers are handed out as they are. `tsc` fails here when they drift apart.

import type * as Wire from './wasm/hudi_edge.js';
import type * as Api from './types.js';

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** The public type allows more (`PlanStats` has an index signature, `skipped` is `unknown[]`). */
type Fits<A, B> = [A] extends [B] ? true : false;
/** The engine's `inserts` / `updates` / `deletes` as the package spells them (`CommitResult`'s
 *  `inserted` / `updated` / `deleted`). */
type Counted<T> = Omit<T, 'inserts' | 'updates' | 'deletes'> & { inserted: number; updated: number; deleted: number };

export type WireMatchesApi = [
  Same<Wire.ScanProgress, Api.Progress>,
  Same<Wire.Instant, Api.Instant>,
  Same<Wire.IoSnapshot, Api.IoStats>,
  Same<Wire.TableInfo, Api.TableInfo>,
  Same<Counted<Wire.WrittenFile>, Api.WrittenFile>,
  Same<Wire.SchemaField, Api.SchemaField>,
  Same<Omit<Counted<Wire.CommitDetail>, 'files'> & { files: Api.WrittenFile[] }, Api.CommitDetail>,
  Same<Wire.BaseFile, Api.BaseFile>,
  Same<Wire.LogFile, Api.LogFile>,
  Same<Wire.FileSlice, Api.FileSlice>,
  Same<Wire.FileGroup, Api.FileGroup>,
  Same<Wire.PartitionLayout, Api.PartitionLayout>,
  Same<Omit<Wire.FileLayout, 'skipped'>, Omit<Api.FileLayout, 'skipped'>>,
  Fits<Wire.FileLayout, Api.FileLayout>,
  Same<Wire.PlannedSlice, Api.PlannedSlice>,
  Same<Omit<Wire.PlanStats, 'ignored'>, Pick<Api.PlanStats, Exclude<keyof Wire.PlanStats, 'ignored'>>>,
  Fits<Pick<Wire.PlanStats, keyof Wire.PlanStats>, Api.PlanStats>,
  Same<Omit<Wire.Plan, 'stats'> & { timeMs: number }, Omit<Api.Plan, 'stats'>>,
  // What the package passes in must be what the engine takes (`Date`s made text first).
  Fits<Omit<Api.ReadOptions, keyof Api.Cancellable | 'asOf' | 'start' | 'end'> & { asOf?: string; start?: string; end?: string }, Wire.ReadOptions>,
  Fits<Pick<Api.OpenOptions, 'headers' | 's3' | 'listing' | 'concurrency' | 'retries'>, Wire.RemoteOptions>,
  Fits<Omit<Api.WriteOptions, 'signal'>, Wire.WriteOptions>,
  Same<Wire.WriteResult, Api.WriteResult>,
  Same<Wire.WriteRecords, Api.WriteRecords>,
  Same<Wire.MetadataTableWrite, Api.MetadataTableWrite>,
  Same<Wire.CleanResult, Api.CleanResult>,
  Same<Wire.ServiceError, Api.ServiceError>,
  Same<Wire.ArchiveResult, Api.ArchiveResult>,
  Same<Wire.TimelineArchived, Api.TimelineArchived>,
  Same<Wire.CompactReport, Api.CompactReport>,
  Same<Wire.CompactionResult, Api.CompactionResult>,
  Same<Wire.ClusterReport, Api.ClusterReport>,
  Same<Wire.ClusteringResult, Api.ClusteringResult>,
  Same<Wire.MdtCacheStats, Api.MetadataCacheStats>,
  Same<Wire.Health, Api.Health>,
  Same<Wire.Finding, Api.Finding>,
  Same<Wire.FixOutcome, Api.FixOutcome>,
  Same<Wire.Discovery, Api.Discovery>,
  Same<Wire.DiscoveredTable, Api.DiscoveredTable>,
  Same<Wire.ChangePlan, Api.ChangePlan>,
  Same<Wire.ChangeSplit, Api.ChangeSplit>,
  Same<Wire.ChangeStats, Api.ChangeStats>,
];

export const wireMatchesApi: WireMatchesApi = [true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true];
