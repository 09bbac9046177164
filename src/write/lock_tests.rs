use super::*;
use crate::storage::memory::MemoryStorage;
use crate::storage::{Instrumented, StorageExt};

fn opts(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

const OCC: (&str, &str) = (CONCURRENCY_MODE, "optimistic_concurrency_control");
const PROVIDER: (&str, &str) = (LOCK_PROVIDER, STORAGE_LOCK_PROVIDER);

#[test]
fn the_json_is_javas() {
    // Jackson's output for `new StorageLockData(false, 1700000000000L, "owner-1")`
    // (checked against Hudi 1.1.1's StorageLockFile.toByteArray, tests/lock).
    let d = LockData {
        expired: false,
        valid_until: 1_700_000_000_000,
        owner: "owner-1".into(),
    };
    assert_eq!(
        &d.to_json()[..],
        br#"{"expired":false,"validUntil":1700000000000,"owner":"owner-1"}"#
    );
    // Unknown fields are ignored, as Java's mapper is told to.
    let parsed = LockData::parse(
        br#"{"owner":"o","validUntil":5,"expired":true,"newField":[1]}"#,
        LOCK_FILE,
    )
    .unwrap();
    assert_eq!(
        (parsed.expired, parsed.valid_until, parsed.owner.as_str()),
        (true, 5, "o")
    );
    // Missing or null fields are refused (Java: required properties, no null
    // primitives), naming the lock object.
    for bad in [
        &br#"{"expired":false,"owner":"o"}"#[..],
        br#"{"expired":null,"validUntil":5,"owner":"o"}"#,
        br#"not json"#,
    ] {
        let e = LockData::parse(bad, LOCK_FILE).unwrap_err();
        assert_eq!((e.code(), e.object()), ("CORRUPT", Some(LOCK_FILE)));
    }
}

#[test]
fn drift_allowance_is_half_a_second() {
    let d = LockData {
        expired: false,
        valid_until: 10_000,
        owner: "o".into(),
    };
    assert!(d.is_live(10_000));
    assert!(d.is_live(10_500));
    assert!(!d.is_live(10_501));
    assert!(!LockData { expired: true, ..d }.is_live(0));
}

#[test]
fn config_defaults_and_javas_checks() {
    assert_eq!(concurrency(&opts(&[])).unwrap(), Concurrency::SingleWriter);
    assert_eq!(
        concurrency(&opts(&[(CONCURRENCY_MODE, "single_writer")])).unwrap(),
        Concurrency::SingleWriter
    );
    assert_eq!(
        concurrency(&opts(&[OCC, PROVIDER])).unwrap(),
        Concurrency::Optimistic(LockConfig::default())
    );
    let Concurrency::Optimistic(c) = concurrency(&opts(&[
        OCC,
        PROVIDER,
        (VALIDITY_TIMEOUT_SECS, "20"),
        (HEARTBEAT_POLL_SECS, "2"),
        (RETRY_WAIT_MS, "50"),
    ]))
    .unwrap() else {
        panic!()
    };
    assert_eq!(
        (c.validity_secs, c.renew_interval_secs, c.retry_wait_ms),
        (20, 2, 50)
    );
    for (bad, says) in [
        (vec![OCC], "needs hoodie.write.lock.provider"),
        (
            vec![
                OCC,
                (
                    LOCK_PROVIDER,
                    "org.apache.hudi.client.transaction.lock.InProcessLockProvider",
                ),
            ],
            "InProcessLockProvider",
        ),
        // 60 s validity with the default 30 s renewal: Java refuses it too.
        (vec![OCC, PROVIDER, (VALIDITY_TIMEOUT_SECS, "60")], "10x"),
        (
            vec![
                OCC,
                PROVIDER,
                (VALIDITY_TIMEOUT_SECS, "9"),
                (RENEW_INTERVAL_SECS, "0"),
            ],
            "10 seconds",
        ),
        (
            vec![
                OCC,
                PROVIDER,
                (VALIDITY_TIMEOUT_SECS, "100"),
                (RENEW_INTERVAL_SECS, "0"),
            ],
            "1 second",
        ),
        (
            vec![
                OCC,
                PROVIDER,
                (RENEW_INTERVAL_SECS, "3"),
                (HEARTBEAT_POLL_SECS, "3"),
            ],
            "not both",
        ),
        (
            vec![OCC, PROVIDER, (VALIDITY_TIMEOUT_SECS, "ten")],
            "whole number",
        ),
        (vec![OCC, PROVIDER, (FAILED_WRITES_POLICY, "EAGER")], "LAZY"),
        (
            vec![(CONCURRENCY_MODE, "NON_BLOCKING_CONCURRENCY_CONTROL")],
            "bucket",
        ),
    ] {
        let e = concurrency(&opts(&bad)).unwrap_err();
        assert!(e.to_string().contains(says), "{bad:?}: {e}");
    }
}

async fn read_lock(store: &dyn Storage) -> LockData {
    let bytes = store
        .get(LOCK_FILE, crate::storage::Purpose::Other)
        .await
        .unwrap();
    LockData::parse(&bytes, LOCK_FILE).unwrap()
}

fn quick() -> LockConfig {
    LockConfig {
        validity_secs: 10,
        renew_interval_secs: 1,
        wait_ms: 300,
        retry_wait_ms: 20,
        ..LockConfig::default()
    }
}

#[tokio::test]
async fn acquire_and_release_cost_two_requests_and_one() {
    let store: std::sync::Arc<dyn Storage> = std::sync::Arc::new(MemoryStorage::new());
    let counted = Instrumented::new(store.clone());
    let a = TableLock::new(&counted, quick()).unwrap();
    let before = counted.stats().snapshot().requests;
    a.acquire().await.unwrap();
    // Absent lock: a GET (404) and a create.
    assert_eq!(counted.stats().snapshot().requests - before, 2);
    let before = counted.stats().snapshot().requests;
    a.release().await.unwrap();
    assert_eq!(counted.stats().snapshot().requests - before, 1);
    let released = read_lock(&*store).await;
    assert!(released.expired);
    assert_eq!(released.owner, a.owner());
    // Again, over the expired lock: a GET and an If-Match PUT.
    let before = counted.stats().snapshot().requests;
    a.acquire().await.unwrap();
    assert_eq!(counted.stats().snapshot().requests - before, 2);
    a.release().await.unwrap();
}

#[tokio::test]
async fn one_holder_at_a_time_and_dangling_locks_are_taken() {
    let store = MemoryStorage::new();
    let a = TableLock::new(&store, quick()).unwrap();
    let b = TableLock::new(&store, quick()).unwrap();
    assert_eq!(a.try_acquire().await.unwrap(), TryLock::Acquired);
    match b.try_acquire().await.unwrap() {
        TryLock::HeldBy(h) => assert_eq!(h.owner, a.owner()),
        other => panic!("{other:?}"),
    }
    let e = b.acquire().await.unwrap_err();
    assert_eq!(e.code(), "CONFLICT");
    assert!(e.to_string().contains(a.owner()), "{e}");
    // `a` renews: `b` still cannot take it.
    assert!(a.renew().await.unwrap());
    assert!(matches!(b.try_acquire().await.unwrap(), TryLock::HeldBy(_)));
    // A clock past validUntil + 500 ms sees a dangling lock and takes it; the old
    // holder's renewal and release then find it gone.
    let late = TableLock::new(&store, quick())
        .unwrap()
        .with_clock(|| files::now_ms() + 10_501);
    assert_eq!(late.try_acquire().await.unwrap(), TryLock::Acquired);
    assert!(!a.renew().await.unwrap());
    a.release().await.unwrap();
    let now = read_lock(&store).await;
    assert_eq!((now.owner.as_str(), now.expired), (late.owner(), false));
    // A writer whose clock is within the lease sees it held.
    assert!(matches!(b.try_acquire().await.unwrap(), TryLock::HeldBy(_)));
}

#[tokio::test]
async fn run_holds_the_lock_around_the_work_and_renews_it() {
    let store = MemoryStorage::new();
    let a = TableLock::new(&store, quick()).unwrap();
    let seen = a
        .run(async {
            let first = read_lock(&store).await;
            // Longer than the renew interval: a renewal goes out meanwhile.
            tokio::time::sleep(Duration::from_millis(1300)).await;
            let later = read_lock(&store).await;
            Ok((first, later))
        })
        .await
        .unwrap();
    assert!(!seen.0.expired && seen.1.valid_until > seen.0.valid_until);
    let after = read_lock(&store).await;
    assert!(after.expired);
}

#[tokio::test]
async fn many_contenders_never_overlap() {
    let store = std::sync::Arc::new(MemoryStorage::new());
    let inside = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let (store, inside) = (store.clone(), inside.clone());
        tasks.push(tokio::spawn(async move {
            let cfg = LockConfig {
                wait_ms: 20_000,
                retry_wait_ms: 5,
                ..quick()
            };
            for _ in 0..5 {
                let lock = TableLock::new(&*store, cfg.clone()).unwrap();
                lock.run(async {
                    assert_eq!(inside.fetch_add(1, std::sync::atomic::Ordering::SeqCst), 0);
                    tokio::time::sleep(Duration::from_millis(2)).await;
                    inside.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
                    Ok(())
                })
                .await
                .unwrap();
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
}
