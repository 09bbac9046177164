//! Waiting without a thread: the lock's renewal and the write's heartbeat run as futures
//! beside the work they guard, woken by the storage's timer ([`crate::storage::timer`]).

use std::time::Duration;

pub use crate::storage::timer::sleep;

/// Runs `work` with `tick` every `every` beside it (the lock's renewal, a write's
/// heartbeat). When `work` ends, a tick in flight is let finish — a request cut off could
/// still land after whatever follows (a release, a heartbeat's delete) — and no other
/// starts. A tick answering an error ends the work there with it (the lock was lost).
pub(crate) async fn beside<T, W, F, Fut>(
    every: Duration,
    work: W,
    mut tick: F,
) -> crate::error::Result<T>
where
    W: std::future::Future<Output = crate::error::Result<T>>,
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<crate::error::HudiError>>,
{
    use futures::future::{select, Either};
    let (stop, mut stopped) = futures::channel::oneshot::channel::<()>();
    let ticks = async {
        loop {
            let pause = sleep(every);
            futures::pin_mut!(pause);
            if let Either::Right(_) = select(pause, &mut stopped).await {
                return None;
            }
            if let Some(e) = tick().await {
                return Some(e);
            }
        }
    };
    let work = async {
        let done = work.await;
        let _ = stop.send(());
        done
    };
    futures::pin_mut!(work);
    futures::pin_mut!(ticks);
    match select(work, ticks).await {
        Either::Left((done, ticks)) => {
            ticks.await;
            done
        }
        Either::Right((Some(e), _)) => Err(e),
        Either::Right((None, work)) => work.await,
    }
}
