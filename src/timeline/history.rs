//! Instants that left the active timeline: the v6 archive (`.hoodie/archived/`, Hudi log
//! files of `HoodieArchivedMetaEntry` records) and the v8+ LSM history
//! (`.hoodie/timeline/history/`, Parquet files named by a manifest).
