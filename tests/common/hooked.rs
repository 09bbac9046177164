//! A storage that hands every request to another after a test's hooks on lists and puts:
//! tests see which prefixes were listed, hold a listing's answer or a put until they let it
//! go.

use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use futures::future::BoxFuture;
use hudi_edge::storage::{ByteRange, Capabilities, Fetched, ObjectMeta, Purpose, PutMode, Storage};

type ListHook = Box<dyn Fn(&str) + Send + Sync>;
pub type AwaitedHook = Box<dyn Fn(&str) -> BoxFuture<'static, ()> + Send + Sync>;

pub struct Hooked {
    pub inner: Arc<dyn Storage>,
    pub on_list: ListHook,
    /// Awaited after the listing was answered, before the caller gets it.
    pub after_list: AwaitedHook,
    /// Awaited before the put goes on.
    pub on_put: AwaitedHook,
}

impl Hooked {
    pub fn new(inner: Arc<dyn Storage>) -> Hooked {
        Hooked {
            inner,
            on_list: Box::new(|_| {}),
            after_list: Box::new(|_| Box::pin(async {})),
            on_put: Box::new(|_| Box::pin(async {})),
        }
    }
}

/// A hook that holds the first request `matches` picks until the test lets it go. Answers
/// the hook, a receiver told once that request is held, and the sender that lets it go.
pub fn gate_once(
    matches: impl Fn(&str) -> bool + Send + Sync + 'static,
) -> (
    AwaitedHook,
    futures::channel::oneshot::Receiver<()>,
    futures::channel::oneshot::Sender<()>,
) {
    let (reached_tx, reached) = futures::channel::oneshot::channel();
    let (release, go) = futures::channel::oneshot::channel::<()>();
    let gate = std::sync::Mutex::new(Some((reached_tx, go)));
    let hook: AwaitedHook = Box::new(move |path| {
        let held = if matches(path) {
            gate.lock().unwrap().take()
        } else {
            None
        };
        Box::pin(async move {
            if let Some((reached, go)) = held {
                let _ = reached.send(());
                let _ = go.await;
            }
        })
    });
    (hook, reached, release)
}

impl std::fmt::Debug for Hooked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Hooked({:?})", self.inner)
    }
}

#[async_trait]
impl Storage for Hooked {
    fn location(&self) -> String {
        self.inner.location()
    }
    fn capabilities(&self) -> Capabilities {
        // Listings go through `list`, where the hooks are: no `list_after`.
        Capabilities {
            lists_after: false,
            ..self.inner.capabilities()
        }
    }
    async fn read(
        &self,
        path: &str,
        ranges: &[ByteRange],
        purpose: Purpose,
    ) -> hudi_edge::Result<Fetched> {
        self.inner.read(path, ranges, purpose).await
    }
    async fn head(&self, path: &str) -> hudi_edge::Result<ObjectMeta> {
        self.inner.head(path).await
    }
    async fn list(&self, prefix: &str, recursive: bool) -> hudi_edge::Result<Vec<ObjectMeta>> {
        (self.on_list)(prefix);
        let listed = self.inner.list(prefix, recursive).await;
        (self.after_list)(prefix).await;
        listed
    }
    async fn put(&self, path: &str, data: Bytes, mode: PutMode) -> hudi_edge::Result<ObjectMeta> {
        (self.on_put)(path).await;
        self.inner.put(path, data, mode).await
    }
    async fn delete(&self, path: &str) -> hudi_edge::Result<()> {
        self.inner.delete(path).await
    }
    async fn get_versioned(&self, path: &str) -> hudi_edge::Result<(Bytes, ObjectMeta)> {
        self.inner.get_versioned(path).await
    }
}
