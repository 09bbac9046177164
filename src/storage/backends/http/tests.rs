//! HttpStorage's pure parts: URLs, error mapping, content ranges.

use super::*;

#[test]
fn content_ranges() {
    assert_eq!(
        parse_content_range("bytes 0-9/100"),
        Some((0, 10, Some(100)))
    );
    assert_eq!(parse_content_range("bytes 90-99/*"), Some((90, 100, None)));
    assert_eq!(parse_content_range("bytes x-9/100"), None);
    assert_eq!(parse_content_range("items 0-9/100"), None);
}

#[test]
fn errors_name_the_object_without_secrets() {
    let r = Response {
        status: 403,
        body: Bytes::from_static(b"<Error><Code>SignatureDoesNotMatch</Code><AWSAccessKeyId>AKIA1</AWSAccessKeyId></Error>"),
        ..Default::default()
    };
    let e = status_error("s3://b/t/x.parquet", &r);
    assert_eq!(e.code(), "ACCESS_DENIED");
    let text = e.to_string();
    assert!(text.contains("s3://b/t/x.parquet") && text.contains("SignatureDoesNotMatch"));
    assert!(!text.contains("AKIA1"));
    let u = url::Url::parse("https://u:secret@h.example/t/?X-Amz-Signature=abc#f").unwrap();
    assert_eq!(redact(&u), "https://h.example/t");
}

/// A store whose next PUT lands and then answers 503 (a lost answer): the client retries
/// and the retry is refused with 412.
#[derive(Debug, Default)]
struct LostAnswers {
    objects: std::sync::Mutex<HashMap<String, Bytes>>,
    lose_next_put: std::sync::Mutex<bool>,
}

#[async_trait::async_trait]
impl Transport for LostAnswers {
    async fn send(&self, r: Request) -> std::result::Result<Response, TransportError> {
        let key = r.url.clone();
        let header = |n: &str| {
            r.headers
                .iter()
                .find(|(k, _)| k == n)
                .map(|(_, v)| v.clone())
        };
        let mut objects = self.objects.lock().unwrap();
        let etag = |b: &Bytes| format!("\"{}\"", crate::storage::md5_hex(b));
        let answer = |status: u16, headers: Vec<(&str, String)>, body: Bytes| Response {
            status,
            headers: headers
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
            body,
            over_limit: false,
        };
        Ok(match r.method {
            "PUT" => {
                let current = objects.get(&key);
                let refused = match (header("If-None-Match"), header("If-Match")) {
                    (Some(_), _) => current.is_some(),
                    (_, Some(want)) => current.map(etag) != Some(want),
                    _ => false,
                };
                if refused {
                    return Ok(answer(412, vec![], Bytes::new()));
                }
                let body = r.body.clone().unwrap_or_default();
                objects.insert(key, body.clone());
                let mut lose = self.lose_next_put.lock().unwrap();
                if std::mem::take(&mut *lose) {
                    answer(503, vec![], Bytes::new())
                } else {
                    answer(200, vec![("etag", etag(&body))], Bytes::new())
                }
            }
            "HEAD" | "GET" => match objects.get(&key) {
                Some(b) => answer(
                    200,
                    vec![("etag", etag(b)), ("content-length", b.len().to_string())],
                    if r.method == "GET" {
                        b.clone()
                    } else {
                        Bytes::new()
                    },
                ),
                None => answer(404, vec![], Bytes::new()),
            },
            _ => answer(405, vec![], Bytes::new()),
        })
    }

    async fn sleep(&self, _: std::time::Duration) {}
}

#[test]
fn a_retried_conditional_put_that_landed_is_not_a_conflict() {
    let t = Arc::new(LostAnswers::default());
    let s = HttpStorage::for_url(
        t.clone(),
        "http://h.example/t/",
        None,
        HttpOptions::default(),
    )
    .unwrap();
    let lose = || *t.lose_next_put.lock().unwrap() = true;
    futures::executor::block_on(async {
        let ours = Bytes::from_static(b"commit");
        lose();
        let m = s
            .put("x.commit", ours.clone(), PutMode::Create)
            .await
            .unwrap();
        assert_eq!(m.size, 6);
        // Someone else's bytes there: a real conflict.
        let e = s
            .put("x.commit", Bytes::from_static(b"theirs"), PutMode::Create)
            .await;
        assert_eq!(e.unwrap_err().code(), "CONFLICT");
        // An empty file cannot be told from another writer's.
        lose();
        let e = s.put("x.requested", Bytes::new(), PutMode::Create).await;
        assert_eq!(e.unwrap_err().code(), "CONFLICT");
        // If-Match: the first attempt changed the ETag the retry carries.
        let etag = s.head("x.commit").await.unwrap().etag.unwrap();
        lose();
        let next = Bytes::from_static(b"commit2");
        s.put(
            "x.commit",
            next.clone(),
            PutMode::UpdateIfMatch(etag.clone()),
        )
        .await
        .unwrap();
        let e = s.put(
            "x.commit",
            Bytes::from_static(b"commit3"),
            PutMode::UpdateIfMatch(etag),
        );
        assert_eq!(e.await.unwrap_err().code(), "CONFLICT");
    });
}

/// A read starts no more file slices early than the store sends requests at once.
#[test]
fn the_store_says_how_many_requests_it_sends_at_once() {
    let at = |concurrency| {
        let options = HttpOptions {
            concurrency,
            ..HttpOptions::default()
        };
        let t = Arc::new(LostAnswers::default());
        let s = HttpStorage::for_url(t, "http://h.example/t/", None, options).unwrap();
        s.capabilities().requests_at_once
    };
    assert_eq!(at(8), Some(8));
    assert_eq!(at(64), Some(64));
    assert_eq!(at(0), Some(1));
}
