//! What the viewer's first screen costs (issue 14, item 4): opening the v9 Merge-On-Read sample
//! table, its timeline, the overview's counts and the file layout. Local storage counts one
//! request per get or list, so the counts are deterministic; no footer, column chunk, log
//! block or metadata-table block may be read for it.

mod common;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use common::*;
use hudi_edge::storage::latency::Latency;
use hudi_edge::storage::local::LocalStorage;
use hudi_edge::storage::Purpose;
use hudi_edge::Table;

const MOR: &str = "sample_table/mor/avro/v9_txns_simple_meta";

#[tokio::test]
async fn first_screen_reads_properties_and_listings_only() {
    // 20 ms per request: requests in flight together overlap, so round trips are counted.
    let local = Arc::new(LocalStorage::new(table_path(MOR)));
    let storage = Arc::new(Latency::new(local, Duration::from_millis(20)));
    let table = Table::open(storage).await.unwrap();
    let timeline = table.timeline();
    let view = table.file_system_view(None).await.unwrap();
    let io = table.io();

    // What the screen shows must be there: the instants and every file group of the data.
    let on_disk: BTreeSet<String> = std::fs::read_dir(table_path(MOR).join(".hoodie/timeline"))
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.as_bytes().first().is_some_and(u8::is_ascii_digit))
        .map(|n| n[..17].to_string())
        .collect();
    let listed: BTreeSet<String> = timeline
        .instants
        .iter()
        .map(|i| i.requested_time.clone())
        .collect();
    assert_eq!(listed, on_disk);
    let partitions: BTreeSet<&str> = view.groups.iter().map(|g| g.partition.as_str()).collect();
    let expected = expected(MOR).expect("expected JSON of the fixture");
    let want_groups: BTreeSet<String> = oracle::expected_file_slices(&expected)
        .into_iter()
        .map(|(p, f, _, _)| format!("{p}/{f}"))
        .collect();
    let got_groups: BTreeSet<String> = view
        .groups
        .iter()
        .filter(|g| !g.slices.is_empty())
        .map(|g| format!("{}/{}", g.partition, g.file_id))
        .collect();
    assert_eq!(got_groups, want_groups);

    // The properties and the timeline's listing (one round trip), the root's, each
    // partition's, and the metadata of each completed replacecommit (the file groups it
    // replaced leave the layout): nothing else.
    let replaces = timeline
        .instants
        .iter()
        .filter(|i| i.action == "replacecommit" && i.is_completed())
        .count() as u64;
    assert!(
        replaces > 0,
        "the fixture has clustering: its replaced groups must be read"
    );
    let purposes: BTreeSet<Purpose> = io.by_purpose.keys().copied().collect();
    assert_eq!(
        purposes,
        BTreeSet::from([
            Purpose::Properties,
            Purpose::Listing,
            Purpose::CommitMetadata
        ]),
        "{:?}",
        io.by_purpose
    );
    let requests = |p: Purpose| io.by_purpose[&p].requests;
    assert_eq!(requests(Purpose::Properties), 1);
    assert_eq!(requests(Purpose::Listing), 2 + partitions.len() as u64);
    assert_eq!(requests(Purpose::CommitMetadata), replaces);
    assert!(io.bytes <= 64 * 1024, "{} bytes", io.bytes);
    // The properties with the timeline; the root with the replacecommits' metadata; the
    // partitions (which share the second round trip when a commit read is still in flight).
    assert!(io.round_trips <= 3, "{} round trips", io.round_trips);
}
