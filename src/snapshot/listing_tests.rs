use std::sync::Arc;

use super::*;
use crate::config::PROPERTIES_FILE;
use crate::storage::memory::MemoryStorage;

/// Data files as `partition/name`, and the listing requests they took.
fn listed(storage: MemoryStorage, properties: &str) -> (Vec<String>, u64) {
    storage.insert(PROPERTIES_FILE, properties.to_string(), None);
    futures::executor::block_on(async {
        let client = MetaClient::open(Arc::new(storage)).await.unwrap();
        let before = client.io().requests;
        let mut files: Vec<String> = list_data_files(&client)
            .await
            .unwrap()
            .into_iter()
            .map(|(p, m)| format!("{p}|{}", m.path))
            .collect();
        files.sort();
        (files, client.io().requests - before)
    })
}

fn table(paths: &[&str]) -> (MemoryStorage, MemoryStorage) {
    let (skipping, by_directory) = (
        MemoryStorage::new(),
        MemoryStorage::new().without_list_after(),
    );
    for p in paths {
        skipping.insert(p, "x", None);
        by_directory.insert(p, "x", None);
    }
    (skipping, by_directory)
}

const TIMELINE: &str = ".hoodie/timeline/20240101000000000_20240101000000001.commit";
const MDT: &str = ".hoodie/metadata/files/.files-0000-0_00000000000000000.log.1_0-0-0";

#[test]
fn a_listing_past_hoodie_finds_what_directory_listings_find() {
    // Value partitions may sort before `.hoodie` ("-1") or after it; a non-partitioned
    // table keeps log files at the root; `.hoodie*` directories hold no data.
    let paths = [
        TIMELINE,
        MDT,
        "-1/a.parquet",
        "-1/.a_20240101000000000.log.1_0-1-1",
        "2024/01/b.parquet",
        "zz/c.parquet",
        ".0d_20240101000000000.log.1_0-1-1",
        "e.parquet",
        ".hoodie_backup/f.parquet",
    ];
    let properties =
        "hoodie.table.name=t\nhoodie.table.type=MERGE_ON_READ\nhoodie.table.version=9\n\
                      hoodie.table.partition.fields=v\n";
    let (skipping, by_directory) = table(&paths);
    let (fast, fast_requests) = listed(skipping, properties);
    let (slow, slow_requests) = listed(by_directory, properties);
    assert_eq!(fast, slow);
    assert_eq!(fast.len(), 6, "{fast:?}");
    // The root and the listing past `.hoodie/` together, then "-1" (it sorts before).
    assert_eq!(fast_requests, 3);
    assert_eq!(slow_requests, 4);
}

#[test]
fn hive_style_partitions_take_one_listing() {
    let paths = [
        TIMELINE,
        MDT,
        "region=eu/a.parquet",
        "region=eu/.a_20240101000000000.log.1_0-1-1",
        "region=us/day=1/b.parquet",
    ];
    let properties = "hoodie.table.name=t\nhoodie.table.type=MERGE_ON_READ\nhoodie.table.version=9\n\
                      hoodie.table.partition.fields=region\nhoodie.datasource.write.hive_style_partitioning=true\n";
    let (skipping, by_directory) = table(&paths);
    let (fast, fast_requests) = listed(skipping, properties);
    let (slow, slow_requests) = listed(by_directory, properties);
    assert_eq!(fast, slow);
    assert_eq!(
        fast,
        [
            "region=eu|region=eu/.a_20240101000000000.log.1_0-1-1",
            "region=eu|region=eu/a.parquet",
            "region=us/day=1|region=us/day=1/b.parquet"
        ]
    );
    assert_eq!((fast_requests, slow_requests), (1, 3));
}

#[test]
fn a_first_page_that_stops_inside_a_partition_leaves_the_rest_to_directory_listings() {
    let mut paths = vec![TIMELINE.to_string(), MDT.to_string()];
    for region in ["eu", "us", "zz"] {
        for i in 0..4 {
            paths.push(format!("region={region}/{i}.parquet"));
        }
    }
    let paths: Vec<&str> = paths.iter().map(String::as_str).collect();
    let properties = "hoodie.table.name=t\nhoodie.table.type=MERGE_ON_READ\nhoodie.table.version=9\n\
                      hoodie.table.partition.fields=region\nhoodie.datasource.write.hive_style_partitioning=true\n";
    let (_, by_directory) = table(&paths);
    let (slow, _) = listed(by_directory, properties);
    assert_eq!(slow.len(), 12);
    // Pages of 6 keys end inside region=us: the page, the root, then us and zz.
    let (skipping, _) = table(&paths);
    let (paged, requests) = listed(skipping.with_pages_after(6), properties);
    assert_eq!(paged, slow);
    assert_eq!(requests, 4);
}
