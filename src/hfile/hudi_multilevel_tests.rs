//! A record-index HFile with a multi-level block index written by Apache Hudi 0.15.0 (HBase's
//! writer), read against what Hudi's and HBase's own readers read from it
//! (`tests/data/hfile/hfile_multilevel_rli.{zip,json}`, made by
//! `tests/spark/hfile_multilevel.sh`).

use std::io::Read;
use std::sync::Arc;

use bytes::Bytes;
use futures::executor::block_on;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::*;
use crate::storage::memory::MemoryStorage;
use crate::storage::Instrumented;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/hfile/");

fn fixture() -> (Bytes, Value) {
    let expected: Value =
        serde_json::from_slice(&std::fs::read(format!("{DATA}hfile_multilevel_rli.json")).unwrap())
            .unwrap();
    let zip = std::fs::File::open(format!("{DATA}hfile_multilevel_rli.zip")).unwrap();
    let mut zip = zip::ZipArchive::new(zip).unwrap();
    let mut entry = zip.by_name(expected["file"].as_str().unwrap()).unwrap();
    let mut bytes = Vec::new();
    entry.read_to_end(&mut bytes).unwrap();
    (Bytes::from(bytes), expected)
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[test]
fn hudi_written_multi_level_index_reads_as_hudi_reads_it() {
    let (bytes, expected) = fixture();
    let hbase = &expected["hbase_reader"];
    let hudi = &expected["hudi_reader"];
    let r = HFileReader::from_bytes(bytes.clone(), "rli.hfile").unwrap();
    let levels = r.trailer().num_data_index_levels;
    assert!(levels >= 2, "the fixture must have a multi-level index");
    assert_eq!(levels as u64, hbase["levels"].as_u64().unwrap());
    assert_eq!(r.entry_count(), hbase["entries"].as_u64().unwrap());

    // Full scan: every cell, in order, hashed as the Java side hashed it.
    let all = block_on(r.scan_all()).unwrap();
    assert_eq!(all.len() as u64, hudi["entries"].as_u64().unwrap());
    let mut sha = Sha256::new();
    for cell in &all {
        sha.update((cell.key.len() as u32).to_be_bytes());
        sha.update(&cell.key);
        sha.update((cell.value.len() as u32).to_be_bytes());
        sha.update(&cell.value);
    }
    assert_eq!(hex(&sha.finalize()), hudi["sha256"].as_str().unwrap());
    let key = |c: &Cell| String::from_utf8(c.key.to_vec()).unwrap();
    let first: Vec<String> = all[..3].iter().map(key).collect();
    let last: Vec<String> = all[all.len() - 3..].iter().map(key).collect();
    assert_eq!(serde_json::json!(first), hudi["first_keys"]);
    assert_eq!(serde_json::json!(last), hudi["last_keys"]);

    // Lookups, one at a time and batched, present and absent keys alike.
    let lookups = hudi["lookups"].as_object().unwrap();
    let keys: Vec<&str> = lookups.keys().map(String::as_str).collect();
    let want: Vec<Option<String>> = lookups
        .values()
        .map(|v| v.as_str().map(str::to_string))
        .collect();
    assert!(want.iter().filter(|v| v.is_some()).count() > 50);
    assert!(want.iter().any(Option::is_none));
    for (k, w) in keys.iter().zip(&want) {
        let got = block_on(r.get(k.as_bytes())).unwrap();
        assert_eq!(got.as_deref().map(hex), *w, "{k}");
    }
    let batched = block_on(r.get_many(&keys)).unwrap();
    let batched: Vec<Option<String>> = batched.iter().map(|v| v.as_deref().map(hex)).collect();
    assert_eq!(batched, want);

    // Over storage: a lookup walks root -> leaf -> data block, the levels Hudi wrote.
    let mem = MemoryStorage::new();
    mem.insert("rli.hfile", bytes, None);
    let io = Instrumented::new(Arc::new(mem));
    let storage: Arc<dyn crate::storage::Storage> = Arc::new(io.clone());
    let opts = OpenOptions {
        tail_bytes: 4096,
        file_size: None,
    };
    let r = block_on(HFileReader::open_with(storage, "rli.hfile", opts)).unwrap();
    let before = io.stats().snapshot();
    let (k, w) = keys.iter().zip(&want).find(|(_, w)| w.is_some()).unwrap();
    let got = block_on(r.get(k.as_bytes())).unwrap();
    assert_eq!(got.as_deref().map(hex), *w);
    let cost = io.stats().snapshot().since(&before);
    assert!(
        cost.requests >= u64::from(levels) - 1,
        "one read per level below the root at least: {cost:?}"
    );
}
