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
use hudi_edge::storage::{IoSnapshot, Purpose, Storage};
use hudi_edge::Table;

const MOR: &str = "sample_table/mor/avro/v9_txns_simple_meta";

/// The first screen over `store` (20 ms per request: requests in flight together overlap,
/// so round trips are counted): its cost, checked to show every instant and file group,
/// and the number of partitions and of completed replacecommits.
async fn first_screen(store: Arc<dyn Storage>) -> (IoSnapshot, u64, u64) {
    let storage = Arc::new(Latency::new(store, Duration::from_millis(20)));
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

    // The metadata of each completed replacecommit is read: the file groups it replaced
    // leave the layout.
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
    assert_eq!(io.by_purpose[&Purpose::CommitMetadata].requests, replaces);
    assert!(io.bytes <= 64 * 1024, "{} bytes", io.bytes);
    (io, partitions.len() as u64, replaces)
}

#[tokio::test]
async fn first_screen_reads_properties_and_listings_only() {
    // A store that starts a listing past a key (local files here, S3's `start-after`): the
    // properties with the timeline's listing, then one listing past `.hoodie/` (the
    // partitions are hive-style) with the replacecommits' metadata: 2 round trips.
    let local: Arc<dyn Storage> = Arc::new(LocalStorage::new(table_path(MOR)));
    let (io, _, replaces) = first_screen(local.clone()).await;
    assert_eq!(io.by_purpose[&Purpose::Properties].requests, 1);
    assert_eq!(io.by_purpose[&Purpose::Listing].requests, 2);
    assert_eq!(io.requests, 3 + replaces, "{:?}", io.by_purpose);
    assert_eq!(io.round_trips, 2);

    // A store that cannot: the root, then each partition (which share the second round trip
    // when a commit read is still in flight).
    let by_directory: Arc<dyn Storage> = Arc::new(common::hooked::Hooked::new(local));
    let (io, partitions, replaces) = first_screen(by_directory).await;
    assert_eq!(io.by_purpose[&Purpose::Listing].requests, 2 + partitions);
    assert_eq!(io.requests, 3 + partitions + replaces);
    assert!(io.round_trips <= 3, "{} round trips", io.round_trips);
}
