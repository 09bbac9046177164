use super::*;
use crate::storage::memory::MemoryStorage;

const TIMELINE: &str = ".hoodie/timeline/20240101000000000_20240101000000001.commit";

#[test]
fn commit_metadata_asked_for_together_is_read_once() {
    let storage = MemoryStorage::new();
    storage.insert(
        PROPERTIES_FILE,
        "hoodie.table.name=t\nhoodie.table.type=COPY_ON_WRITE\nhoodie.table.version=9\n",
        None,
    );
    storage.insert(TIMELINE, r#"{"partitionToWriteStats":{}}"#, None);
    // Reads yield once, so that the two asks are in flight together.
    let yielding = crate::hfile::test_support::Yielding(Arc::new(storage));
    futures::executor::block_on(async {
        let client = MetaClient::open(Arc::new(yielding)).await.unwrap();
        let timeline = client.timeline();
        let instant = timeline.instants.first().unwrap();
        let before = client.io().requests;
        let (a, b) = futures::join!(
            client.commit_metadata(instant),
            client.commit_metadata(instant)
        );
        assert!(Arc::ptr_eq(&a.unwrap(), &b.unwrap()));
        assert_eq!(client.io().requests - before, 1);
    });
}

#[test]
fn a_reopened_client_keeps_what_it_decoded_of_completed_instants() {
    let storage = Arc::new(MemoryStorage::new());
    storage.insert(
        PROPERTIES_FILE,
        "hoodie.table.name=t\nhoodie.table.type=COPY_ON_WRITE\nhoodie.table.version=9\n",
        None,
    );
    storage.insert(TIMELINE, r#"{"partitionToWriteStats":{}}"#, None);
    let inflight = ".hoodie/timeline/20240102000000000.commit.inflight";
    storage.insert(inflight, "", None);
    futures::executor::block_on(async {
        let client = MetaClient::open(storage.clone()).await.unwrap();
        let first = client.timeline().completed().next().unwrap().clone();
        let decoded = client.commit_metadata(&first).await.unwrap();
        // The inflight commit completes, and the first one is rolled back meanwhile: only
        // what is still completed from the same file carries over.
        storage.insert(
            ".hoodie/timeline/20240102000000000_20240102000000001.commit",
            r#"{"partitionToWriteStats":{}}"#,
            None,
        );
        let again = client.reopen().await.unwrap();
        let before = again.io().requests;
        let kept = again.commit_metadata(&first).await.unwrap();
        assert!(Arc::ptr_eq(&decoded, &kept));
        assert_eq!(again.io().requests, before, "no read for a decoded instant");
        let second = again.timeline().get("20240102000000000").unwrap().clone();
        assert!(second.is_completed());
        again.commit_metadata(&second).await.unwrap();
        assert_eq!(again.io().requests, before + 1);

        storage.delete(TIMELINE).await.unwrap();
        let later = again.reopen().await.unwrap();
        assert!(lock(&later.commit_metadata)
            .get(&first.requested_time)
            .is_none());
        assert!(lock(&later.commit_metadata).contains_key("20240102000000000"));
    });
}
