//! Waiting without a thread: tokio's timer natively, `setTimeout` on the JS event loop in wasm
//! (the global's, so it works where there is no `window`). The HTTP retries' backoff and the
//! writer's lock renewal and heartbeats wait here.

use std::time::Duration;

#[cfg(not(target_arch = "wasm32"))]
pub async fn sleep(d: Duration) {
    tokio::time::sleep(d).await
}

/// The timer runs on the event loop as its own task; this future only waits for its signal,
/// so it stays `Send` like every other future of the core.
#[cfg(target_arch = "wasm32")]
pub async fn sleep(d: Duration) {
    let (tx, rx) = futures::channel::oneshot::channel::<()>();
    wasm_bindgen_futures::spawn_local(async move {
        let _ = timeout(d).await;
        let _ = tx.send(());
    });
    let _ = rx.await;
}

/// A promise resolved after `d` (at once when the global has no `setTimeout`).
#[cfg(target_arch = "wasm32")]
fn timeout(d: Duration) -> wasm_bindgen_futures::JsFuture {
    use wasm_bindgen::{JsCast, JsValue};
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
    wasm_bindgen_futures::JsFuture::from(promise)
}

// A request handed to the host (the global `fetch`, a JS storage's method) leaves only when
// the host's event loop runs. Engine CPU that follows in the same turn — decoding metadata
// a cache answered at once — would hold it back for as long as it runs.
#[cfg(target_arch = "wasm32")]
thread_local! {
    static HANDED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Notes that a request was handed to the host in this turn of its event loop.
#[cfg(target_arch = "wasm32")]
pub fn handed_to_host() {
    if !HANDED.with(|h| h.replace(true)) {
        // Cleared by a task of the next turn: by then the host has sent what it was given.
        wasm_bindgen_futures::spawn_local(async {
            let _ = timeout(Duration::ZERO).await;
            HANDED.with(|h| h.set(false));
        });
    }
}

#[cfg(not(target_arch = "wasm32"))]
pub fn handed_to_host() {}

/// Lets the host send the requests handed to it in this turn before CPU work goes on (one
/// turn of its event loop; nothing when none are waiting, and nothing natively, where
/// requests travel on their own tasks).
#[cfg(target_arch = "wasm32")]
pub async fn let_requests_out() {
    if HANDED.with(|h| h.get()) {
        sleep(Duration::ZERO).await;
    }
}

#[cfg(not(target_arch = "wasm32"))]
pub async fn let_requests_out() {}
