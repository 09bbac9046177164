//! Merging a file slice: base rows plus log records, with Hudi's ordering rules (§6).
