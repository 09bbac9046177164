//! HBase HFile v3 reader, as Hudi writes it for the metadata table (docs: hudi-format §7).
