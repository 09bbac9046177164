//! # hudi-edge
//!
//! An Apache Hudi engine that runs wherever Rust compiles to: natively (the `hudi-edge` CLI)
//! and as WebAssembly in browsers, Node and edge workers.
//!
//! ## Layers
//!
//! ```text
//!  faces     cli (native)      wasm (wasm-bindgen)      ── pkg-config/ (TypeScript), www/
//!            sql (DataFusion table provider; native, feature `datafusion`)
//!              \                /
//!  shared     api: wire types, options, row encodings, URL → storage
//!  ─────────────────────────────────────────────────────────────── the core knows no face
//!  entry      table::Table ─────────────────────────────── one handle, delegates to:
//!  queries    read (plan: source → prune; scan: slices → batches)
//!  nouns      merge   metadata (MDT: files, column_stats, partition_stats, record_index)
//!             meta_client (storage + hoodie.properties + timeline + session caches)
//!             base_file  log_file  hfile  timeline  file_group  config  keygen  schema
//!             expr  value  avro  error
//!  I/O seam   storage::RangedFile (tail, coalescing, short reads, purpose per request)
//!             storage::Storage (read ranges, head, list, conditional put, delete,
//!             capabilities) ── Instrumented (counts by purpose) ── Cached (session)
//!  hosts      storage impls: memory; local, http(s), s3, zip (cargo features); fetch (wasm)
//! ```
//!
//! Each layer imports only the ones below it: `tests/module_layers.rs` checks that the module
//! graph has no cycle and that no core module imports a face; `tests/layers.rs` that the core
//! builds without the storage features (no reqwest, object_store, quick-xml or zip). The core
//! is *sans-IO*: it asks the [`storage::Storage`] trait for bytes by path relative to the
//! table's base path and is handed them; format readers go through one
//! [`storage::RangedFile`]. Only `storage` and the wasm face know where they run.
//! [`storage::Instrumented`] counts every request by purpose, so each plan and read reports
//! its cost.
//!
//! ## The path of one read
//!
//! `hudi-edge read t --filter 'id = 7'` (or `table.readArrow({filters})` in JS):
//! 1. the face turns flags / JS options into [`read::ReadOptions`] and opens a storage for
//!    the URL; [`Table::open`] reads `hoodie.properties` and lists the timeline in one
//!    round trip ([`meta_client::MetaClient`]);
//! 2. [`read::plan()`] resolves times against the [`timeline`], chooses once which
//!    metadata-table indexes the filter can use, loads the [`snapshot::Snapshot`] at that
//!    instant (the schema, the data files from the MDT `files` partition or a listing, the
//!    file-system view of [`file_group`]; the index lookups ride in its round trips), and
//!    prunes its latest slices (`read::plan::prune`): partition values, record index,
//!    partition stats, column stats, Parquet footers — each stage counted in
//!    [`read::PlanStats`]. Writes and table services start from the same snapshot;
//! 3. [`read::Scan`] reads the selected file slices a few at a time: base files by the row
//!    groups the filter may match ([`base_file`]), merged with their log blocks
//!    ([`log_file`], [`merge`]) under Hudi's ordering rules, then aligned, filtered and
//!    projected; it applies the row limit and reports progress;
//! 4. the face encodes the Arrow `RecordBatch`es (JSON lines, CSV, Arrow IPC) and prints
//!    what it cost ([`storage::IoSnapshot`], by purpose).
//!
//! Dropping a read's future cancels it: nothing it started outlives it (in wasm, every
//! in-flight `fetch` is aborted).

pub mod api;
pub mod avro;
pub mod base_file;
pub mod cast;
pub mod clean;
pub mod compare;
pub mod config;
pub mod error;
pub mod expr;
pub mod file_group;
pub mod health;
pub mod hfile;
pub mod index;
pub mod keygen;
pub mod log_file;
pub mod merge;
pub mod meta_client;
pub mod metadata;
pub mod read;
pub mod schema;
pub mod snapshot;
pub mod storage;
pub mod table;
pub mod timeline;
pub mod value;
pub mod write;

#[cfg(all(
    not(target_arch = "wasm32"),
    feature = "local",
    feature = "http",
    feature = "s3",
    feature = "zip"
))]
pub mod cli;
#[cfg(all(not(target_arch = "wasm32"), feature = "datafusion"))]
pub mod sql;
#[cfg(all(
    target_arch = "wasm32",
    feature = "http",
    feature = "s3",
    feature = "zip"
))]
pub mod wasm;

pub use error::{HudiError, Result};
pub use table::Table;
