//! HTTP in wasm: the global `fetch` (looked up on `globalThis`, so the same build works in
//! windows, dedicated workers, Node and workerd), or one the application hands in.
//!
//! - [`FetchTransport`] carries [`crate::storage::http::HttpStorage`]'s requests: plain HTTP(S),
//!   presigned URLs and SigV4-signed S3.
//! - Each request gets its own `AbortController`: when the Rust future waiting for it is
//!   dropped (an operation aborted through its `AbortSignal`, or abandoned), the request is
//!   aborted too, and its rejected promises are always awaited — never unhandled.
//! - Backoff sleeps are a `setTimeout` promise.
//!
//! `JsFuture` is `!Send` while the [`crate::storage::Storage`] trait wants `Send` futures: every JS interaction runs in a `spawn_local` task and hands its outcome
//! back over a `oneshot` channel; the `Send` side only waits on channels.

use std::collections::HashMap;
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use futures::channel::oneshot;
use futures::FutureExt;
use js_sys::{Array, Function, Object, Promise, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use crate::error::{HudiError, Result};
use crate::storage::http::{
    strip_urls, ListPage, Presigner, Request, Response, Transport, TransportError,
};

fn global_fn(name: &str) -> Option<Function> {
    Reflect::get(&js_sys::global(), &name.into())
        .ok()
        .and_then(|f| f.dyn_into::<Function>().ok())
}

/// A JS error's message, with any URL in it redacted (no query, no credentials).
fn js_text(e: &JsValue) -> String {
    let text = Reflect::get(e, &"message".into())
        .ok()
        .and_then(|m| m.as_string())
        .or_else(|| e.as_string())
        .unwrap_or_else(|| "request failed".into());
    strip_urls(&text)
}

fn is_abort(e: &JsValue) -> bool {
    Reflect::get(e, &"name".into())
        .ok()
        .and_then(|n| n.as_string())
        .is_some_and(|n| n == "AbortError")
}

/// Requests through `fetch`.
#[derive(Debug, Clone)]
pub struct FetchTransport {
    fetch: Function,
}

// wasm32 without threads: there is one thread, so nothing is ever sent or shared across
// threads. The Transport trait asks for Send + Sync because native transports are shared.
unsafe impl Send for FetchTransport {}
unsafe impl Sync for FetchTransport {}

impl FetchTransport {
    /// `fetch`: the application's own, or the global one.
    pub fn new(fetch: Option<Function>) -> Result<Self> {
        let fetch = fetch
            .or_else(|| global_fn("fetch"))
            .ok_or_else(|| HudiError::unsupported("this JavaScript runtime has no global fetch"))?;
        Ok(FetchTransport { fetch })
    }

    /// Starts the request on the JS event loop. Dropping the returned cancel sender aborts it.
    fn start(
        &self,
        r: Request,
    ) -> (
        oneshot::Receiver<std::result::Result<Response, TransportError>>,
        oneshot::Sender<()>,
    ) {
        let (tx, rx) = oneshot::channel();
        let (cancel_tx, cancel_rx) = oneshot::channel::<()>();
        let fetch = self.fetch.clone();
        crate::storage::timer::handed_to_host();
        wasm_bindgen_futures::spawn_local(async move {
            let controller = web_sys::AbortController::new().ok();
            let work = run_fetch(fetch, r, controller.clone()).fuse();
            let cancelled = cancel_rx.fuse();
            futures::pin_mut!(work, cancelled);
            let outcome = futures::select! {
                o = work => o,
                _ = cancelled => {
                    if let Some(c) = &controller {
                        c.abort();
                    }
                    // The fetch's own promise rejects with AbortError; it is handled by
                    // the JsFuture callbacks registered on it.
                    Err(TransportError { detail: "aborted".into(), aborted: true })
                }
            };
            let _ = tx.send(outcome);
        });
        (rx, cancel_tx)
    }
}

async fn run_fetch(
    fetch: Function,
    r: Request,
    controller: Option<web_sys::AbortController>,
) -> std::result::Result<Response, TransportError> {
    let fail = |e: JsValue| TransportError {
        detail: js_text(&e),
        aborted: is_abort(&e),
    };
    let init = Object::new();
    let headers = Object::new();
    for (k, v) in &r.headers {
        let _ = Reflect::set(&headers, &k.as_str().into(), &v.as_str().into());
    }
    let _ = Reflect::set(&init, &"method".into(), &r.method.into());
    let _ = Reflect::set(&init, &"headers".into(), &headers);
    if let Some(body) = &r.body {
        let _ = Reflect::set(&init, &"body".into(), &Uint8Array::from(body.as_ref()));
    }
    if let Some(c) = &controller {
        let _ = Reflect::set(&init, &"signal".into(), &c.signal());
    }
    // `fetch` would follow a redirect with every header: with the table's credentials,
    // redirects come back to `Client`, which follows them within the origin only.
    if r.credentials {
        let _ = Reflect::set(&init, &"redirect".into(), &"manual".into());
    }
    let promise = fetch
        .call2(&js_sys::global(), &r.url.as_str().into(), &init)
        .map_err(fail)?;
    let resp = JsFuture::from(Promise::resolve(&promise))
        .await
        .map_err(fail)?;
    let resp: web_sys::Response = resp.unchecked_into();
    let status = resp.status();
    let mut headers = HashMap::new();
    if let Ok(Some(iter)) = js_sys::try_iter(&resp.headers()) {
        for pair in iter.flatten() {
            let pair = Array::from(&pair);
            if let (Some(k), Some(v)) = (pair.get(0).as_string(), pair.get(1).as_string()) {
                headers.insert(k.to_ascii_lowercase(), v);
            }
        }
    }
    let kind = Reflect::get(&resp, &"type".into())
        .ok()
        .and_then(|t| t.as_string());
    if kind.as_deref() == Some("opaqueredirect") {
        // A browser hides where a manual redirect goes: it cannot be checked, so refused.
        return Err(TransportError {
            detail:
                "redirected, and the browser hides where to: not followed with the table's headers"
                    .into(),
            aborted: false,
        });
    }
    let over = Response {
        status,
        headers: headers.clone(),
        body: Bytes::new(),
        over_limit: true,
    };
    let abort = || {
        if let Some(c) = &controller {
            c.abort(); // stop the download; nobody waits on the body
        }
    };
    if r.declared_over_limit(status, &headers) {
        abort();
        return Ok(over);
    }
    if r.method == "HEAD" {
        return Ok(Response {
            status,
            headers,
            body: Bytes::new(),
            over_limit: false,
        });
    }
    let limit = r.body_limit(status).unwrap_or(u64::MAX);
    match read_body(&resp, limit).await.map_err(fail)? {
        Some(body) => Ok(Response {
            status,
            headers,
            body,
            over_limit: false,
        }),
        None => {
            abort();
            Ok(over)
        }
    }
}

/// The body read chunk by chunk from its stream, counting; `None` past `limit` bytes.
/// Runtimes without `body.getReader` read it whole, then check.
async fn read_body(
    resp: &web_sys::Response,
    limit: u64,
) -> std::result::Result<Option<Bytes>, JsValue> {
    let stream = Reflect::get(resp, &"body".into())?;
    if stream.is_null() || stream.is_undefined() {
        return Ok(Some(Bytes::new()));
    }
    let Some(get_reader) = Reflect::get(&stream, &"getReader".into())?
        .dyn_into::<Function>()
        .ok()
    else {
        let buffer = JsFuture::from(resp.array_buffer()?).await?;
        let body = Uint8Array::new(&buffer);
        return Ok((u64::from(body.length()) <= limit).then(|| Bytes::from(body.to_vec())));
    };
    let reader = get_reader.call0(&stream)?;
    let read: Function = Reflect::get(&reader, &"read".into())?.dyn_into()?;
    let mut body = Vec::new();
    loop {
        let chunk = JsFuture::from(Promise::resolve(&read.call0(&reader)?)).await?;
        if Reflect::get(&chunk, &"done".into())?.is_truthy() {
            return Ok(Some(Bytes::from(body)));
        }
        let value = Uint8Array::new(&Reflect::get(&chunk, &"value".into())?);
        if (body.len() as u64).saturating_add(u64::from(value.length())) > limit {
            if let Ok(cancel) = Reflect::get(&reader, &"cancel".into())?.dyn_into::<Function>() {
                // Its promise settles on its own; nothing waits for it.
                let _ = cancel.call0(&reader);
            }
            return Ok(None);
        }
        body.extend_from_slice(&value.to_vec());
    }
}

/// Cancels the request when dropped (the future awaiting it went away).
struct CancelOnDrop(Option<oneshot::Sender<()>>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(c) = self.0.take() {
            let _ = c.send(());
        }
    }
}

#[async_trait]
impl Transport for FetchTransport {
    async fn send(&self, r: Request) -> std::result::Result<Response, TransportError> {
        let (rx, cancel) = self.start(r);
        let mut guard = CancelOnDrop(Some(cancel));
        let outcome = rx.await.unwrap_or_else(|_| {
            Err(TransportError {
                detail: "the request task ended".into(),
                aborted: true,
            })
        });
        guard.0 = None; // finished: nothing to cancel
        outcome
    }

    async fn sleep(&self, d: Duration) {
        crate::storage::timer::sleep(d).await
    }
}

// ---------------------------------------------------------------------------------------
// Presigning through a JS callback

/// `(method, key, page?) => Promise<string>`, usually a call to the application's server.
#[derive(Debug)]
pub struct JsPresigner {
    callback: Function,
}

unsafe impl Send for JsPresigner {}
unsafe impl Sync for JsPresigner {}

impl JsPresigner {
    pub fn new(callback: Function) -> Self {
        JsPresigner { callback }
    }
}

#[async_trait]
impl Presigner for JsPresigner {
    async fn presign(&self, method: &str, key: &str, list: Option<&ListPage>) -> Result<String> {
        let (tx, rx) = oneshot::channel::<Result<String>>();
        let callback = self.callback.clone();
        let (m, k) = (method.to_string(), key.to_string());
        let page = list.and_then(|p| serde_json::to_string(p).ok());
        wasm_bindgen_futures::spawn_local(async move {
            let page = page
                .and_then(|p| js_sys::JSON::parse(&p).ok())
                .unwrap_or(JsValue::UNDEFINED);
            let outcome = match callback.call3(
                &JsValue::UNDEFINED,
                &m.as_str().into(),
                &k.as_str().into(),
                &page,
            ) {
                Ok(v) => match JsFuture::from(Promise::resolve(&v)).await {
                    Ok(url) => url.as_string().ok_or_else(|| {
                        HudiError::invalid(format!(
                            "the presign callback did not answer a URL string for {m} {k}"
                        ))
                    }),
                    Err(e) => Err(HudiError::AccessDenied {
                        path: k.clone(),
                        detail: format!("presign callback failed: {}", js_text(&e)),
                    }),
                },
                Err(e) => Err(HudiError::AccessDenied {
                    path: k.clone(),
                    detail: format!("presign callback threw: {}", js_text(&e)),
                }),
            };
            let _ = tx.send(outcome);
        });
        rx.await
            .unwrap_or_else(|_| Err(HudiError::Aborted(format!("presigning {method} {key}"))))
    }
}
