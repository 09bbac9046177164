//! The Hudi log format: `#HUDI#`-framed blocks (docs: hudi-format §5).
