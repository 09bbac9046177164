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
