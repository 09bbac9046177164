//! Where Hudi keeps things under a table's base path (docs/hudi-format.md §1): one place for
//! the path names the reader, the writer and the services share.

/// The table's own folder.
pub const HOODIE_DIR: &str = ".hoodie";
pub const PROPERTIES_FILE: &str = ".hoodie/hoodie.properties";
/// Written beside the properties while they change; read when they are missing.
pub const PROPERTIES_BACKUP: &str = ".hoodie/hoodie.properties.backup";
/// The timeline of layout 2 (table versions 8 and 9); layout 1 keeps instants in `.hoodie/`.
pub const TIMELINE_DIR: &str = ".hoodie/timeline";
/// The metadata table, itself a Merge-On-Read Hudi table.
pub const METADATA_DIR: &str = ".hoodie/metadata";
/// Markers of writes in progress, one folder per instant.
pub const MARKERS_DIR: &str = ".hoodie/.temp";
/// Writers' heartbeat files, one per pending instant.
pub const HEARTBEAT_DIR: &str = ".hoodie/.heartbeat";
/// The storage-based lock of several writers.
pub const LOCK_FILE: &str = ".hoodie/.locks/table_lock.json";
/// InternalSchema history of tables whose schema evolved on read.
pub const SCHEMA_HISTORY_DIR: &str = ".hoodie/.schema/";
/// Index definitions (column stats columns, secondary and expression indexes), unless
/// `hoodie.table.index.defs.path` says otherwise.
pub const INDEX_DEFS_FILE: &str = ".hoodie/.index_defs/index.json";
/// Auxiliary folders Java creates with a table.
pub const AUX_DIR: &str = ".hoodie/.aux";
/// In every partition folder: the commit that created it and its depth.
pub const PARTITION_METADATA: &str = ".hoodie_partition_metadata";
