//! Apache Hudi's storage-based table lock (RFC-91, Java `StorageBasedLockProvider`), so
//! this writer and Java writers configured with that provider exclude each other.
//!
//! One object, `.hoodie/.locks/table_lock.json`, holding `{"expired": bool, "validUntil":
//! epoch ms, "owner": "uuid"}` (Java's `StorageLockData`; unknown fields ignored). Acquire:
//! read it with its ETag; absent → create it (`If-None-Match: *`); expired, or past
//! `validUntil` by more than Java's 500 ms clock-drift allowance → overwrite it
//! (`If-Match`); a refused condition means another writer won. Renew: rewrite a later
//! `validUntil` with `If-Match` on our ETag. Release: write `expired: true` with
//! `If-Match` (never a delete). Uncontended: acquire is a GET and a PUT, release a PUT.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use bytes::Bytes;
use serde::{Deserialize, Serialize};

use super::files;
use crate::error::{HudiError, Result};
use crate::storage::{PutMode, Storage};

pub use crate::config::layout::LOCK_FILE;

/// Java's `StorageBasedLockProvider.CLOCK_DRIFT_BUFFER_MS`: a lock counts as dangling
/// only once our clock is this far past its `validUntil`.
pub const CLOCK_DRIFT_BUFFER_MS: i64 = 500;

pub const CONCURRENCY_MODE: &str = "hoodie.write.concurrency.mode";
pub const LOCK_PROVIDER: &str = "hoodie.write.lock.provider";
pub const STORAGE_LOCK_PROVIDER: &str =
    "org.apache.hudi.client.transaction.lock.StorageBasedLockProvider";
pub const VALIDITY_TIMEOUT_SECS: &str = "hoodie.write.lock.storage.validity.timeout.secs";
pub const RENEW_INTERVAL_SECS: &str = "hoodie.write.lock.storage.renew.interval.secs";
/// The older name Java still takes for [`RENEW_INTERVAL_SECS`].
pub const HEARTBEAT_POLL_SECS: &str = "hoodie.write.lock.storage.heartbeat.poll.secs";
pub const WAIT_TIME_MS: &str = "hoodie.write.lock.wait_time_ms";
pub const RETRY_WAIT_MS: &str = "hoodie.write.lock.wait_time_ms_between_retry";
pub const FAILED_WRITES_POLICY: &str = "hoodie.cleaner.policy.failed.writes";
pub const CLIENT_HEARTBEAT_INTERVAL_MS: &str = "hoodie.client.heartbeat.interval_in_ms";
pub const CLIENT_HEARTBEAT_MISSES: &str = "hoodie.client.heartbeat.tolerable.misses";

/// The lock object's content, field for field Java's `StorageLockData` (Jackson writes
/// the creator's properties in this order).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockData {
    pub expired: bool,
    #[serde(rename = "validUntil")]
    pub valid_until: i64,
    pub owner: String,
}

impl LockData {
    pub fn to_json(&self) -> Bytes {
        Bytes::from(serde_json::to_vec(self).unwrap_or_default())
    }

    /// Java refuses a lock file missing any of the three fields or with a null primitive.
    pub fn parse(bytes: &[u8], object: &str) -> Result<LockData> {
        serde_json::from_slice(bytes)
            .map_err(|e| HudiError::corrupt(object, format!("not a storage lock: {e}")))
    }

    /// Whether the lock still excludes others as seen from a clock reading `now_ms`.
    pub fn is_live(&self, now_ms: i64) -> bool {
        !self.expired && now_ms <= self.valid_until + CLOCK_DRIFT_BUFFER_MS
    }
}

/// The lock's timings, as Java's `StorageBasedLockConfig` and `LockConfiguration` read and
/// check them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockConfig {
    pub validity_secs: u64,
    pub renew_interval_secs: u64,
    /// How long an acquire keeps trying (`hoodie.write.lock.wait_time_ms`).
    pub wait_ms: u64,
    /// Between tries (Java's storage-based provider waits a fixed second).
    pub retry_wait_ms: u64,
    /// The write's own heartbeat file (`.hoodie/.heartbeat/<instant>`): how often it is
    /// touched, and how many touches may be missed before the write counts as failed.
    pub heartbeat_interval_ms: u64,
    pub heartbeat_misses: u64,
}

impl Default for LockConfig {
    fn default() -> Self {
        LockConfig {
            validity_secs: 300,
            renew_interval_secs: 30,
            wait_ms: 60_000,
            retry_wait_ms: 1_000,
            heartbeat_interval_ms: 60_000,
            heartbeat_misses: 2,
        }
    }
}

impl LockConfig {
    /// A pending write whose heartbeat is older than this has failed (Java's
    /// `maxAllowableHeartbeatIntervalInMs`).
    pub fn heartbeat_expiry_ms(&self) -> i64 {
        (self.heartbeat_interval_ms * self.heartbeat_misses) as i64
    }
}

/// How writes to the table coordinate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Concurrency {
    /// Hudi's default: one writer at a time, failed writes rolled back eagerly.
    SingleWriter,
    /// Optimistic concurrency under the storage-based lock.
    Optimistic(LockConfig),
}

impl Concurrency {
    /// `work`, under the table lock (held throughout) when several writers are configured.
    pub async fn exclusive<T>(
        &self,
        storage: &dyn Storage,
        work: impl std::future::Future<Output = Result<T>>,
    ) -> Result<T> {
        match self {
            Concurrency::SingleWriter => work.await,
            Concurrency::Optimistic(config) => {
                TableLock::new(storage, config.clone())?.run(work).await
            }
        }
    }
}

fn number(options: &BTreeMap<String, String>, key: &str) -> Result<Option<u64>> {
    options
        .get(key)
        .map(|v| {
            v.trim()
                .parse::<u64>()
                .map_err(|_| HudiError::invalid(format!("{key}={v} is not a whole number")))
        })
        .transpose()
}

/// Reads the concurrency mode and the lock's settings from Hudi's write configs, checked
/// as Java checks them.
pub fn concurrency(options: &BTreeMap<String, String>) -> Result<Concurrency> {
    let mode = options
        .get(CONCURRENCY_MODE)
        .map(|m| m.trim().to_ascii_uppercase())
        .unwrap_or_else(|| "SINGLE_WRITER".into());
    match mode.as_str() {
        "SINGLE_WRITER" => return Ok(Concurrency::SingleWriter),
        "OPTIMISTIC_CONCURRENCY_CONTROL" => {}
        "NON_BLOCKING_CONCURRENCY_CONTROL" => {
            return Err(HudiError::unsupported(
                "hoodie.write.concurrency.mode=NON_BLOCKING_CONCURRENCY_CONTROL (needs a bucket \
                 index; use OPTIMISTIC_CONCURRENCY_CONTROL)",
            ))
        }
        other => {
            return Err(HudiError::invalid(format!(
                "{CONCURRENCY_MODE}={other} (SINGLE_WRITER, OPTIMISTIC_CONCURRENCY_CONTROL)"
            )))
        }
    }
    match options.get(LOCK_PROVIDER).map(|p| p.trim()) {
        Some(STORAGE_LOCK_PROVIDER) => {}
        Some(other) => {
            return Err(HudiError::unsupported(format!(
                "{LOCK_PROVIDER}={other}: this writer takes part only through \
                 {STORAGE_LOCK_PROVIDER}, the lock every writer can reach on the table's storage"
            )))
        }
        None => {
            return Err(HudiError::invalid(format!(
                "{CONCURRENCY_MODE}=optimistic_concurrency_control needs \
                 {LOCK_PROVIDER}={STORAGE_LOCK_PROVIDER} (the lock Java writers of the table \
                 must use too)"
            )))
        }
    }
    if options
        .get(FAILED_WRITES_POLICY)
        .is_some_and(|p| p.trim().eq_ignore_ascii_case("EAGER"))
    {
        return Err(HudiError::invalid(format!(
            "{FAILED_WRITES_POLICY}=EAGER with several writers would roll back live writes \
             (multi-writer needs LAZY)"
        )));
    }
    if options.contains_key(RENEW_INTERVAL_SECS) && options.contains_key(HEARTBEAT_POLL_SECS) {
        return Err(HudiError::invalid(format!(
            "set {RENEW_INTERVAL_SECS} or its older name {HEARTBEAT_POLL_SECS}, not both"
        )));
    }
    let d = LockConfig::default();
    let validity = number(options, VALIDITY_TIMEOUT_SECS)?.unwrap_or(d.validity_secs);
    let renew = match number(options, RENEW_INTERVAL_SECS)? {
        Some(n) => n,
        None => number(options, HEARTBEAT_POLL_SECS)?.unwrap_or(d.renew_interval_secs),
    };
    // Java's StorageBasedLockConfig rules, in its order and words.
    if validity < renew.saturating_mul(10) {
        return Err(HudiError::invalid(format!(
            "{VALIDITY_TIMEOUT_SECS} should be greater than or equal to 10x {RENEW_INTERVAL_SECS} \
             ({validity} < 10 x {renew})"
        )));
    }
    if validity < 10 {
        return Err(HudiError::invalid(format!(
            "{VALIDITY_TIMEOUT_SECS} should be greater than or equal to 10 seconds."
        )));
    }
    if renew < 1 {
        return Err(HudiError::invalid(format!(
            "{RENEW_INTERVAL_SECS} should be greater than or equal to 1 second."
        )));
    }
    let heartbeat =
        number(options, CLIENT_HEARTBEAT_INTERVAL_MS)?.unwrap_or(d.heartbeat_interval_ms);
    if heartbeat < 1000 {
        return Err(HudiError::invalid(format!(
            "{CLIENT_HEARTBEAT_INTERVAL_MS}={heartbeat}: cannot set heartbeat lower than 1 second"
        )));
    }
    Ok(Concurrency::Optimistic(LockConfig {
        validity_secs: validity,
        renew_interval_secs: renew,
        wait_ms: number(options, WAIT_TIME_MS)?.unwrap_or(d.wait_ms),
        retry_wait_ms: number(options, RETRY_WAIT_MS)?
            .unwrap_or(d.retry_wait_ms)
            .max(1),
        heartbeat_interval_ms: heartbeat,
        heartbeat_misses: number(options, CLIENT_HEARTBEAT_MISSES)?
            .unwrap_or(d.heartbeat_misses)
            .max(1),
    }))
}

/// Concurrent writing needs conditional updates (`If-Match` on an ETag).
fn no_etags() -> HudiError {
    HudiError::unsupported_in(
        "concurrent writing on a store that gives no ETags (the storage-based lock needs \
         conditional updates with If-Match)",
        LOCK_FILE,
    )
}

/// What one try at the lock found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TryLock {
    Acquired,
    /// Held by this owner (valid until then), or taken from under us by a racing writer.
    HeldBy(LockData),
}

/// The lock as one writer holds it: its owner id and, while held, the object's ETag.
#[derive(Debug)]
pub struct TableLock<'a> {
    storage: &'a dyn Storage,
    pub config: LockConfig,
    owner: String,
    held: Mutex<Option<(LockData, String)>>,
    /// One renewal at a time: two conditional PUTs with the same ETag would fail one.
    renewing: futures::lock::Mutex<()>,
    now: fn() -> i64,
}

impl<'a> TableLock<'a> {
    pub fn new(storage: &'a dyn Storage, config: LockConfig) -> Result<TableLock<'a>> {
        let id = files::new_file_id()?;
        // A bare UUID, as Java's owner ids (file ids end in "-0").
        let owner = id.trim_end_matches("-0").to_string();
        Ok(TableLock {
            storage,
            config,
            owner,
            held: Mutex::new(None),
            renewing: futures::lock::Mutex::new(()),
            now: files::now_ms,
        })
    }

    pub fn owner(&self) -> &str {
        &self.owner
    }

    fn held(&self) -> Option<(LockData, String)> {
        self.held.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn set_held(&self, h: Option<(LockData, String)>) {
        *self.held.lock().unwrap_or_else(|e| e.into_inner()) = h;
    }

    fn ours(&self, expired: bool, valid_until: i64) -> LockData {
        LockData {
            expired,
            valid_until,
            owner: self.owner.clone(),
        }
    }

    /// One pass, as Java's `tryLock()`: a GET, then a conditional PUT when the lock is
    /// free.
    pub async fn try_acquire(&self) -> Result<TryLock> {
        // Re-entrant, as Java's: a lock we hold with lease left costs no request.
        if self.holds(0) {
            return Ok(TryLock::Acquired);
        }
        let current = match self.storage.get_versioned(LOCK_FILE).await {
            Ok((bytes, meta)) => {
                let data = LockData::parse(&bytes, LOCK_FILE)?;
                let etag = meta.etag.ok_or_else(no_etags)?;
                Some((data, etag))
            }
            Err(HudiError::NotFound { .. }) => None,
            Err(e) => return Err(e),
        };
        if let Some((data, _)) = &current {
            if data.is_live((self.now)()) {
                return Ok(TryLock::HeldBy(data.clone()));
            }
        }
        let mine = self.ours(
            false,
            (self.now)() + (self.config.validity_secs * 1000) as i64,
        );
        let mode = match &current {
            None => PutMode::Create,
            Some((_, etag)) => PutMode::UpdateIfMatch(etag.clone()),
        };
        match self.storage.put(LOCK_FILE, mine.to_json(), mode).await {
            Ok(meta) => {
                let Some(etag) = meta.etag else {
                    // Created, but it could never be renewed or released conditionally:
                    // taken back at once, and the store refused for concurrent writing.
                    let _ = self.storage.delete(LOCK_FILE).await;
                    return Err(no_etags());
                };
                self.set_held(Some((mine, etag)));
                Ok(TryLock::Acquired)
            }
            Err(HudiError::Conflict { .. }) => Ok(TryLock::HeldBy(
                current
                    .map(|(d, _)| d)
                    .unwrap_or_else(|| self.ours(false, 0)),
            )),
            Err(e) => Err(e),
        }
    }

    /// Tries until acquired or `hoodie.write.lock.wait_time_ms` has passed (`CONFLICT`
    /// naming the holder).
    pub async fn acquire(&self) -> Result<()> {
        let deadline = (self.now)() + self.config.wait_ms as i64;
        loop {
            let holder = match self.try_acquire().await {
                Ok(TryLock::Acquired) => return Ok(()),
                Ok(TryLock::HeldBy(h)) => h,
                // A store hiccup (409, throttling, 5xx after the store's own retries) is an
                // unknown state in Java too: try again until the deadline.
                Err(e @ HudiError::Io { .. }) if (self.now)() < deadline => {
                    let _ = e;
                    self.pause().await;
                    continue;
                }
                Err(e) => return Err(e),
            };
            if (self.now)() >= deadline {
                return Err(HudiError::Conflict {
                    path: LOCK_FILE.into(),
                    detail: format!(
                        "the table lock is held by {} (valid until {}); not acquired within {} ms \
                         ({WAIT_TIME_MS})",
                        holder.owner, holder.valid_until, self.config.wait_ms
                    ),
                });
            }
            self.pause().await;
        }
    }

    async fn pause(&self) {
        super::timer::sleep(Duration::from_millis(self.config.retry_wait_ms)).await
    }

    /// Extends the lease (one conditional PUT). `Ok(false)`: the lock is no longer ours.
    pub async fn renew(&self) -> Result<bool> {
        let _one = self.renewing.lock().await;
        let Some((_, etag)) = self.held() else {
            return Ok(false);
        };
        let mine = self.ours(
            false,
            (self.now)() + (self.config.validity_secs * 1000) as i64,
        );
        match self
            .storage
            .put(LOCK_FILE, mine.to_json(), PutMode::UpdateIfMatch(etag))
            .await
        {
            Ok(meta) => match meta.etag {
                Some(etag) => {
                    self.set_held(Some((mine, etag)));
                    Ok(true)
                }
                None => Ok(false),
            },
            Err(HudiError::Conflict { .. }) => {
                self.set_held(None);
                Ok(false)
            }
            // Java lets the next renewal try again after an unknown error.
            Err(HudiError::Io { .. }) => Ok(true),
            Err(e) => Err(e),
        }
    }

    /// Whether we hold the lock with at least `margin_ms` of its lease left by our clock.
    pub fn holds(&self, margin_ms: i64) -> bool {
        self.held()
            .is_some_and(|(d, _)| (self.now)() + margin_ms < d.valid_until)
    }

    /// Marks the lock expired (one conditional PUT). Someone else holding it by now is not
    /// an error: it was not ours any more.
    pub async fn release(&self) -> Result<()> {
        let Some((data, etag)) = self.held() else {
            return Ok(());
        };
        let expired = self.ours(true, data.valid_until);
        match self
            .storage
            .put(LOCK_FILE, expired.to_json(), PutMode::UpdateIfMatch(etag))
            .await
        {
            Ok(_) | Err(HudiError::Conflict { .. }) => {
                self.set_held(None);
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// Runs `work` holding the lock: acquired first, renewed every renew interval while
    /// `work` runs (a future beside it, no thread), released after. When a renewal finds
    /// the lock taken, `work` is dropped and the answer is `CONFLICT`.
    pub async fn run<T, F>(&self, work: F) -> Result<T>
    where
        F: std::future::Future<Output = Result<T>>,
    {
        self.acquire().await?;
        let lost = || HudiError::Conflict {
            path: LOCK_FILE.into(),
            detail: "the table lock was lost (its lease ran out and another writer took it)".into(),
        };
        let every = Duration::from_secs(self.config.renew_interval_secs);
        let outcome = super::timer::beside(every, work, || async {
            match self.renew().await {
                Ok(true) => None,
                Ok(false) => Some(lost()),
                Err(e) => Some(e),
            }
        })
        .await;
        let released = self.release().await;
        let value = outcome?;
        released?;
        Ok(value)
    }

    #[cfg(test)]
    fn with_clock(mut self, now: fn() -> i64) -> Self {
        self.now = now;
        self
    }
}

#[cfg(test)]
#[path = "lock_tests.rs"]
mod tests;
