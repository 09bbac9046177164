//! The metadata table (`.hoodie/metadata`): files, column_stats, partition_stats, record_index (§8).
