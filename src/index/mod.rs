//! Record-key indexes a writer maintains inside its files: the bloom filter of a base
//! file's footer, which Java's bloom index reads to tag updates.

pub mod bloom;

pub use bloom::{BloomFilter, BloomType};
