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
