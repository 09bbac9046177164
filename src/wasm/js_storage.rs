//! A [`Storage`] whose operations are async functions of a JavaScript object — how Node
//! tests hand files in, and how JS applications plug in their own access. Each call gets an
//! `AbortSignal` as its last argument, aborted when the engine drops the request.

use async_trait::async_trait;
use bytes::Bytes;
use futures::channel::oneshot;
use js_sys::{Array, ArrayBuffer, Function, Promise, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use crate::error::{HudiError, Result};
use crate::storage::js_failure::JsFailure;
use crate::storage::{
    read_each, ByteRange, Capabilities, Fetched, ObjectMeta, Purpose, PutMode, Storage,
};

#[derive(Debug)]
pub struct JsStorage {
    object: JsValue,
}

// wasm32 without threads: there is one thread, so nothing is ever sent or shared across
// threads. The Storage trait asks for Send + Sync because native stores are shared.
unsafe impl Send for JsStorage {}
unsafe impl Sync for JsStorage {}

impl JsStorage {
    pub fn new(object: JsValue) -> Self {
        JsStorage { object }
    }

    fn has(&self, method: &str) -> bool {
        Reflect::get(&self.object, &method.into()).is_ok_and(|f| f.is_function())
    }
}

/// The fields of a JS error (or answer) that tell what failed; see [`JsFailure`].
fn failure_of(e: &JsValue) -> JsFailure {
    let get = |o: &JsValue, k: &str| {
        Reflect::get(o, &k.into())
            .ok()
            .filter(|v| !v.is_undefined())
    };
    let text = |k: &str| get(e, k).and_then(|v| v.as_string());
    let number = |o: &JsValue, k: &str| get(o, k).and_then(|v| v.as_f64());
    let status = number(e, "status")
        .or_else(|| number(e, "statusCode"))
        .or_else(|| get(e, "$metadata").and_then(|m| number(&m, "httpStatusCode")));
    JsFailure {
        code: text("code").or_else(|| text("Code")),
        name: text("name"),
        status,
        conflict: get(e, "conflict")
            .and_then(|v| v.as_bool())
            .unwrap_or(false),
        message: text("message")
            .unwrap_or_else(|| e.as_string().unwrap_or_else(|| format!("{e:?}"))),
    }
}

fn js_error(path: &str, e: JsValue) -> HudiError {
    failure_of(&e).to_error(path, false)
}

/// Aborts its controller when dropped before `done`: the request's future was dropped.
struct AbortOnDrop {
    controller: web_sys::AbortController,
    done: bool,
}

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        if !self.done {
            self.controller.abort();
        }
    }
}

/// Calls `object[method](...args, signal)` and awaits the promise on the JS event loop; the
/// result is converted before it crosses back, so the future we hand out is `Send`.
async fn call<T: Send + 'static>(
    object: &JsValue,
    method: &str,
    args: Array,
    path: &str,
    convert: impl FnOnce(JsValue) -> Result<T> + 'static,
) -> Result<T> {
    let f: Function = Reflect::get(object, &method.into())
        .ok()
        .and_then(|f| f.dyn_into().ok())
        .ok_or_else(|| HudiError::unsupported(format!("storage has no {method}()")))?;
    let (tx, rx) = oneshot::channel();
    let path_owned = path.to_string();
    let controller = web_sys::AbortController::new().map_err(|e| js_error(path, e))?;
    args.push(&controller.signal());
    let mut guard = AbortOnDrop {
        controller,
        done: false,
    };
    let promise = f.apply(object, &args).map(|v| Promise::resolve(&v));
    crate::storage::timer::handed_to_host();
    wasm_bindgen_futures::spawn_local(async move {
        let outcome = match promise {
            Ok(p) => match JsFuture::from(p).await {
                Ok(v) => convert(v),
                Err(e) => Err(js_error(&path_owned, e)),
            },
            Err(e) => Err(js_error(&path_owned, e)),
        };
        let _ = tx.send(outcome);
    });
    let outcome = rx
        .await
        .map_err(|_| HudiError::Aborted(format!("storage call {method}({path}) was dropped")))?;
    guard.done = true;
    outcome
}

/// The bytes a `get` for `range` answered (a `Uint8Array`, another view or an
/// `ArrayBuffer`), their length checked against [`ByteRange::body_limit`] before they are
/// copied into the module's memory.
fn bytes_of(v: JsValue, range: &ByteRange, path: &str) -> Result<Bytes> {
    let number = |k: &str| Reflect::get(&v, &k.into()).ok().and_then(|n| n.as_f64());
    let view = if ArrayBuffer::is_view(&v) {
        let (offset, len) = (number("byteOffset"), number("byteLength"));
        let buffer = Reflect::get(&v, &"buffer".into()).ok();
        offset.zip(len).zip(buffer).map(|((o, l), b)| (b, o, l))
    } else if v.is_instance_of::<ArrayBuffer>() {
        number("byteLength").map(|l| (v.clone(), 0.0, l))
    } else {
        None
    };
    let Some((buffer, offset, len)) = view else {
        return Err(HudiError::io(
            path,
            "storage get() answered something other than bytes",
        ));
    };
    if len > range.body_limit() as f64 {
        return Err(range.body_over(path));
    }
    // The length is at most the limit; a view past 4 GiB of its buffer cannot be copied.
    if offset > f64::from(u32::MAX) {
        return Err(HudiError::io(
            path,
            "storage get() answered a view past 4 GiB",
        ));
    }
    let bytes = Uint8Array::new_with_byte_offset_and_length(&buffer, offset as u32, len as u32);
    Ok(Bytes::from(bytes.to_vec()))
}

/// A listing's entries: an array of objects, each read field by field, or (how the npm
/// package hands them over) that array as UTF-8 JSON bytes with every field of the type the
/// engine reads, taken in one copy instead of five property reads per entry across the
/// boundary (a metadata table's thousand files cost ~15 ms of a cold open). Bytes, not a
/// string: wasm-bindgen copies a string in a JS loop, slow while it is still cold.
fn listing_of(v: &JsValue, prefix: &str) -> Result<Vec<ObjectMeta>> {
    let Some(json) = v.dyn_ref::<Uint8Array>() else {
        return Ok(Array::from(v).iter().map(|m| meta_of(&m, "")).collect());
    };
    let listed: serde_json::Value = serde_json::from_slice(&json.to_vec())
        .map_err(|e| HudiError::corrupt_by(prefix, "storage listing (JSON)", e))?;
    let Some(entries) = listed.as_array() else {
        return Err(HudiError::corrupt(
            prefix,
            "storage listing (JSON) is not an array",
        ));
    };
    Ok(entries
        .iter()
        .map(|m| {
            let text = |k: &str| m.get(k).and_then(|v| v.as_str()).map(str::to_string);
            let number = |k: &str| m.get(k).and_then(|v| v.as_f64());
            ObjectMeta {
                path: text("path").unwrap_or_default(),
                size: number("size").unwrap_or(0.0) as u64,
                last_modified_ms: number("lastModified").map(|t| t as i64),
                etag: text("etag"),
                is_dir: m.get("isDir").and_then(|v| v.as_bool()).unwrap_or(false),
            }
        })
        .collect())
}

fn meta_of(v: &JsValue, fallback_path: &str) -> ObjectMeta {
    let get = |k: &str| Reflect::get(v, &k.into()).ok();
    ObjectMeta {
        path: get("path")
            .and_then(|p| p.as_string())
            .unwrap_or_else(|| fallback_path.to_string()),
        size: get("size").and_then(|s| s.as_f64()).unwrap_or(0.0) as u64,
        last_modified_ms: get("lastModified")
            .and_then(|m| m.as_f64())
            .map(|m| m as i64),
        etag: get("etag").and_then(|e| e.as_string()),
        is_dir: get("isDir").and_then(|d| d.as_bool()).unwrap_or(false),
    }
}

#[async_trait]
impl Storage for JsStorage {
    fn location(&self) -> String {
        Reflect::get(&self.object, &"location".into())
            .ok()
            .and_then(|l| l.as_string())
            .unwrap_or_else(|| "js://".into())
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            suffix_ranges: false,
            // Without `put` (and `delete`, for markers) a write would fail midway.
            writable: self.has("put") && self.has("delete"),
            lists_after: self.has("listAfter"),
            ..Capabilities::full()
        }
    }

    async fn read(&self, path: &str, ranges: &[ByteRange], _: Purpose) -> Result<Fetched> {
        read_each(ranges, |r| async move {
            let (range, size) = match r {
                ByteRange::Bounded(range) => (range, None),
                ByteRange::Suffix(n) => {
                    // The JS interface has no suffix reads: the size first.
                    let size = self.head(path).await?.size;
                    (size.saturating_sub(n)..size, Some(size))
                }
                ByteRange::Whole => {
                    // `get(path, start?, end?, signal)`: the signal is always fourth.
                    let args = Array::of3(&path.into(), &JsValue::UNDEFINED, &JsValue::UNDEFINED);
                    let p = path.to_string();
                    let all = call(&self.object, "get", args, path, move |v| {
                        bytes_of(v, &ByteRange::Whole, &p)
                    });
                    let all = all.await?;
                    let len = all.len() as u64;
                    return Ok(Fetched::one(all, Some(len)));
                }
            };
            let args = Array::of3(
                &path.into(),
                &(range.start as f64).into(),
                &(range.end as f64).into(),
            );
            let p = path.to_string();
            let asked = ByteRange::Bounded(range);
            let bytes = call(&self.object, "get", args, path, move |v| {
                bytes_of(v, &asked, &p)
            });
            Ok(Fetched::one(bytes.await?, size))
        })
        .await
    }

    async fn head(&self, path: &str) -> Result<ObjectMeta> {
        let p = path.to_string();
        call(
            &self.object,
            "head",
            Array::of1(&path.into()),
            path,
            move |v| Ok(meta_of(&v, &p)),
        )
        .await
    }

    async fn list(&self, prefix: &str, recursive: bool) -> Result<Vec<ObjectMeta>> {
        let args = Array::of2(&prefix.into(), &recursive.into());
        let p = prefix.to_string();
        call(&self.object, "list", args, prefix, move |v| {
            listing_of(&v, &p)
        })
        .await
    }

    /// `listAfter(startAfter)` when the object has it (optional: a store that can start a
    /// recursive listing past a key, as S3's `start-after`).
    async fn list_after(&self, start_after: &str) -> Result<Option<crate::storage::ListedAfter>> {
        if !self.capabilities().lists_after {
            return Ok(None);
        }
        let args = Array::of1(&start_after.into());
        let listed = call(&self.object, "listAfter", args, "", |v| listing_of(&v, "")).await?;
        Ok(Some(crate::storage::ListedAfter::new(
            listed,
            start_after,
            true,
        )))
    }

    async fn put(&self, path: &str, data: Bytes, mode: PutMode) -> Result<ObjectMeta> {
        let mode_js: JsValue = match &mode {
            PutMode::Overwrite => "overwrite".into(),
            PutMode::Create => "create".into(),
            PutMode::UpdateIfMatch(etag) => etag.into(),
        };
        let args = Array::of3(
            &path.into(),
            &Uint8Array::from(data.as_ref()).into(),
            &mode_js,
        );
        let p = path.to_string();
        let conditional = mode != PutMode::Overwrite;
        let answer = call(&self.object, "put", args, path, move |v| {
            // An answer may report the refusal instead of throwing it.
            let f = failure_of(&v);
            if f.is_refusal() {
                return Err(f.to_error(&p, true));
            }
            Ok(meta_of(&v, &p))
        })
        .await;
        match answer {
            // A thrown "not found" on a conditional put: the object to update is gone.
            Err(HudiError::NotFound { path }) if conditional => Err(HudiError::Conflict {
                path,
                detail: "object is gone".into(),
            }),
            other => other,
        }
    }

    async fn delete(&self, path: &str) -> Result<()> {
        call(
            &self.object,
            "delete",
            Array::of1(&path.into()),
            path,
            |_| Ok(()),
        )
        .await
    }
}
