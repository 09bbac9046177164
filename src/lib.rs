//! # hudi-edge
//!
//! An Apache Hudi engine that runs wherever Rust compiles to: natively (the `hudi-edge` CLI)
//! and as WebAssembly in browsers, Node and edge workers.
//!
//! ## The map
//!
//! The core is *sans-IO*: nothing below touches a file system or a network. Every module
//! asks one small async trait, [`storage::Storage`] (ranged get, head, list, put,
//! put-if-absent, delete), for bytes by path relative to the table's base path. Storage
//! implementations (local files, memory, HTTP/S3) live in [`storage`]; only they and the
//! wasm face know where they run. [`storage::Instrumented`] counts every request, so each
//! read reports its cost.
//!
//! The modules follow Hudi's own nouns:
//!
//! | module | owns |
//! |---|---|
//! | [`config`] | `hoodie.properties`: table type, version, keys, layout, merge mode |
//! | [`timeline`] | instants (active, v6 archive, v8+ LSM history), commit metadata |
//! | [`file_group`] | base/log file names, file groups, file slices, the file-system view |
//! | [`log_file`] | the `#HUDI#` log block format: data, delete, command and corrupt blocks |
//! | [`merge`] | combining a slice's base rows and log records with Hudi's ordering rules |
//! | [`hfile`] | HBase HFile v3 reader (the metadata table's file format) |
//! | [`metadata`] | the metadata table: `files`, `column_stats`, `partition_stats`, `record_index` |
//! | [`expr`] | filters, evaluated against partition values, statistics and rows |
//! | [`schema`] | Avro schemas to Arrow |
//! | [`read`] | query planning (snapshot, time travel, read-optimized, incremental) and execution |
//!
//! Results are Arrow `RecordBatch`es. The faces on top are thin: the CLI (`cli`, native
//! only), the wasm-bindgen API (`wasm`, wasm only), the TypeScript package in `pkg-config/`
//! and the viewer in `www/`. What the faces share — wire types, option parsing, row
//! encodings, the URL → storage factory — is [`api`]; the core never imports it.
//!
//! [`table::Table`] is the entry point: open a table on a storage, then plan or read.

pub mod api;
pub mod avro;
pub mod config;
pub mod error;
pub mod expr;
pub mod file_group;
pub mod hfile;
pub mod keygen;
pub mod log_file;
pub mod merge;
pub mod metadata;
pub mod read;
pub mod schema;
pub mod storage;
pub mod table;
pub mod timeline;

#[cfg(not(target_arch = "wasm32"))]
pub mod cli;
#[cfg(target_arch = "wasm32")]
pub mod wasm;

pub use error::{HudiError, Result};
pub use table::Table;
