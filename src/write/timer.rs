//! Waiting without a thread: the lock's renewal and the write's heartbeat run as futures
//! beside the work they guard, woken by tokio's timer natively and by `setTimeout` on the
//! JS event loop in wasm.

use std::time::Duration;

#[cfg(not(target_arch = "wasm32"))]
pub async fn sleep(d: Duration) {
    tokio::time::sleep(d).await
}

/// The timer runs on the event loop as its own task; this future only waits for its
/// signal, so it stays `Send` like every other future of the core.
#[cfg(target_arch = "wasm32")]
pub async fn sleep(d: Duration) {
    use wasm_bindgen::{JsCast, JsValue};
    let (tx, rx) = futures::channel::oneshot::channel::<()>();
    wasm_bindgen_futures::spawn_local(async move {
        let ms = d.as_millis().min(i32::MAX as u128) as i32;
        let promise = js_sys::Promise::new(&mut |resolve, _reject| {
            let set_timeout = js_sys::Reflect::get(&js_sys::global(), &"setTimeout".into())
                .ok()
                .and_then(|f| f.dyn_into::<js_sys::Function>().ok());
            match set_timeout {
                Some(f) => {
                    let _ = f.call2(&JsValue::UNDEFINED, &resolve, &ms.into());
                }
                None => {
                    let _ = resolve.call0(&JsValue::UNDEFINED);
                }
            }
        });
        let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
        let _ = tx.send(());
    });
    let _ = rx.await;
}

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
