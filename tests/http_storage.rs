//! `HttpStorage` natively (object_store's reqwest client as the transport) against a tiny
//! in-process HTTP server on loopback: conditional puts (`If-None-Match: *`, `If-Match`),
//! 412 as `Conflict`, suffix ranges, retries after 503, servers that ignore `Range`, 403
//! naming the object without the URL's token, deletes. The server is plain `std::net`, one
//! connection at a time, `Connection: close`.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use hudi_edge::storage::http::{HttpOptions, HttpStorage};
use hudi_edge::storage::object_store::ReqwestTransport;
use hudi_edge::storage::{ByteRange, Purpose, PutMode, Storage, StorageExt};

#[derive(Default)]
struct State {
    objects: HashMap<String, (Vec<u8>, u64)>, // body, version (the ETag)
    fail_next: u32,
    ignore_range: bool,
    requests: Vec<String>,
}

/// A request's line and headers (names in lower case).
fn read_head(reader: &mut impl BufRead) -> Option<(String, HashMap<String, String>)> {
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut headers = HashMap::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    Some((line, headers))
}

fn respond(out: &mut impl Write, status: u16, headers: &[(&str, String)], body: &[u8]) {
    let mut head = format!(
        "HTTP/1.1 {status} X\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    let _ = out.write_all(head.as_bytes());
    let _ = out.write_all(body);
}

fn serve(state: Arc<Mutex<State>>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(500) {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let Some((line, headers)) = read_head(&mut reader) else {
                continue;
            };
            let mut parts = line.split_whitespace();
            let (method, target) = (
                parts.next().unwrap_or("").to_string(),
                parts.next().unwrap_or("").to_string(),
            );
            let len: usize = headers
                .get("content-length")
                .and_then(|l| l.parse().ok())
                .unwrap_or(0);
            let mut body = vec![0; len];
            let _ = reader.read_exact(&mut body);
            let path = target
                .split('?')
                .next()
                .unwrap_or("")
                .trim_start_matches('/')
                .to_string();
            let mut s = state.lock().unwrap();
            s.requests.push(format!("{method} {target}"));
            if s.fail_next > 0 {
                s.fail_next -= 1;
                respond(&mut stream, 503, &[], b"busy");
                continue;
            }
            if path.contains("secret/") {
                respond(
                    &mut stream,
                    403,
                    &[],
                    b"<Error><Code>AccessDenied</Code></Error>",
                );
                continue;
            }
            let current = s.objects.get(&path).cloned();
            match method.as_str() {
                "PUT" => {
                    let none_match = headers.get("if-none-match").map(String::as_str) == Some("*");
                    let if_match = headers.get("if-match").cloned();
                    let conflict = (none_match && current.is_some())
                        || if_match.is_some_and(|e| {
                            current.as_ref().map(|(_, v)| format!("\"{v}\"")) != Some(e)
                        });
                    if conflict {
                        respond(
                            &mut stream,
                            412,
                            &[],
                            b"<Error><Code>PreconditionFailed</Code></Error>",
                        );
                    } else {
                        let version = current.map(|(_, v)| v + 1).unwrap_or(1);
                        s.objects.insert(path, (body, version));
                        respond(&mut stream, 200, &[("ETag", format!("\"{version}\""))], b"");
                    }
                }
                "DELETE" => {
                    s.objects.remove(&path);
                    respond(&mut stream, 204, &[], b"");
                }
                "GET" | "HEAD" => {
                    let Some((data, version)) = current else {
                        respond(&mut stream, 404, &[], b"");
                        continue;
                    };
                    let etag = ("ETag", format!("\"{version}\""));
                    let range = headers
                        .get("range")
                        .filter(|_| !s.ignore_range)
                        .and_then(|r| r.strip_prefix("bytes=").map(str::to_string));
                    let (status, slice, extra) = match range {
                        Some(r) => {
                            let (a, b) = r.split_once('-').unwrap();
                            let n = data.len();
                            let (start, end) = if a.is_empty() {
                                (n.saturating_sub(b.parse().unwrap()), n)
                            } else {
                                (
                                    a.parse::<usize>().unwrap().min(n),
                                    (b.parse::<usize>().unwrap() + 1).min(n),
                                )
                            };
                            (
                                206,
                                data[start..end].to_vec(),
                                vec![("Content-Range", format!("bytes {start}-{}/{n}", end - 1))],
                            )
                        }
                        None => (200, data.clone(), vec![]),
                    };
                    let mut hs = vec![etag];
                    hs.extend(extra);
                    if method == "HEAD" {
                        let head = format!("HTTP/1.1 200 X\r\nConnection: close\r\nContent-Length: {}\r\nETag: \"{version}\"\r\n\r\n", data.len());
                        let _ = stream.write_all(head.as_bytes());
                    } else {
                        respond(&mut stream, status, &hs, &slice);
                    }
                }
                _ => respond(&mut stream, 405, &[], b""),
            }
        }
    });
    format!("http://{addr}")
}

fn storage(base: &str) -> HttpStorage {
    let transport = Arc::new(ReqwestTransport::new().unwrap());
    HttpStorage::for_url(transport, base, None, HttpOptions::default()).unwrap()
}

/// The in-process server holding `a/f.bin` = `abcdefghij`, and a storage on `/t` whose base
/// URL carries a token.
fn with_object() -> (Arc<Mutex<State>>, HttpStorage) {
    let state = Arc::new(Mutex::new(State::default()));
    state
        .lock()
        .unwrap()
        .objects
        .insert("t/a/f.bin".into(), (b"abcdefghij".to_vec(), 1));
    let url = serve(state.clone());
    (state, storage(&format!("{url}/t?token=s3cr3t")))
}

#[tokio::test]
async fn create_twice_is_a_conflict() {
    let (_, s) = with_object();
    s.put("b/new.bin", Bytes::from_static(b"0123"), PutMode::Create)
        .await
        .unwrap();
    let e = s
        .put("b/new.bin", Bytes::from_static(b"x"), PutMode::Create)
        .await
        .unwrap_err();
    assert_eq!(e.code(), "CONFLICT", "{e}");
}

#[tokio::test]
async fn update_if_match_needs_the_current_etag() {
    let (_, s) = with_object();
    let etag = s.head("a/f.bin").await.unwrap().etag.unwrap();
    s.put(
        "a/f.bin",
        Bytes::from_static(b"ABCDEFGHIJ"),
        PutMode::UpdateIfMatch(etag.clone()),
    )
    .await
    .unwrap();
    let e = s
        .put(
            "a/f.bin",
            Bytes::from_static(b"y"),
            PutMode::UpdateIfMatch(etag),
        )
        .await
        .unwrap_err();
    assert_eq!(e.code(), "CONFLICT");
    assert_eq!(
        &s.get("a/f.bin", Purpose::Other).await.unwrap()[..],
        b"ABCDEFGHIJ"
    );
}

#[tokio::test]
async fn ranges_tails_head_and_not_found() {
    let (_, s) = with_object();
    assert_eq!(
        &s.get_range("a/f.bin", 2..5, Purpose::Other).await.unwrap()[..],
        b"cde"
    );
    let tail = s.read("a/f.bin", &[ByteRange::Suffix(4)], Purpose::Other);
    let tail = tail.await.unwrap();
    assert_eq!((&tail.parts[0][..], tail.size), (&b"ghij"[..], Some(10)));
    assert_eq!(s.head("a/f.bin").await.unwrap().size, 10);
    assert_eq!(
        s.get("nope", Purpose::Other).await.unwrap_err().code(),
        "NOT_FOUND"
    );
}

#[tokio::test]
async fn two_503s_are_retried_four_exhaust_three_retries() {
    let (state, s) = with_object();
    state.lock().unwrap().fail_next = 2;
    assert_eq!(
        &s.get("a/f.bin", Purpose::Other).await.unwrap()[..],
        b"abcdefghij"
    );
    assert_eq!(
        state.lock().unwrap().requests.len(),
        3,
        "two 503s, then 200"
    );
    state.lock().unwrap().requests.clear();
    state.lock().unwrap().fail_next = 4;
    assert_eq!(
        s.get("a/f.bin", Purpose::Other).await.unwrap_err().code(),
        "IO"
    );
    assert_eq!(
        state.lock().unwrap().requests.len(),
        4,
        "the first try and three retries"
    );
}

#[tokio::test]
async fn a_server_ignoring_range_is_sliced_locally_with_a_warning() {
    let (state, s) = with_object();
    state.lock().unwrap().ignore_range = true;
    let both = [ByteRange::Bounded(2..5), ByteRange::Suffix(3)];
    let f = s.read("a/f.bin", &both, Purpose::Other).await.unwrap();
    assert_eq!(
        (&f.parts[0][..], &f.parts[1][..], f.size),
        (&b"cde"[..], &b"hij"[..], Some(10))
    );
    assert!(f.warnings.iter().any(|w| w.contains("ignored Range")));
}

#[tokio::test]
async fn a_403_names_the_object_not_the_token() {
    let (_, s) = with_object();
    let e = s.get("secret/x.parquet", Purpose::Other).await.unwrap_err();
    assert_eq!(e.code(), "ACCESS_DENIED");
    let text = e.to_string();
    assert!(
        text.contains("/t/secret/x.parquet") && !text.contains("s3cr3t"),
        "{text}"
    );
}

#[tokio::test]
async fn delete_then_not_found_and_the_token_goes_with_every_request() {
    let (state, s) = with_object();
    s.delete("a/f.bin").await.unwrap();
    assert_eq!(
        s.get("a/f.bin", Purpose::Other).await.unwrap_err().code(),
        "NOT_FOUND"
    );
    let requests = state.lock().unwrap().requests.clone();
    assert_eq!(requests.len(), 2, "{requests:?}");
    assert!(
        requests.iter().all(|r| r.ends_with("token=s3cr3t")),
        "{requests:?}"
    );
}

/// A server answering each request with what `answer` writes (raw HTTP), recording
/// `METHOD target` and the request's headers.
type Seen = Arc<Mutex<Vec<(String, HashMap<String, String>)>>>;

fn scripted(
    answer: impl Fn(&str, &HashMap<String, String>, &mut std::net::TcpStream) + Send + 'static,
) -> (String, Seen) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let seen: Seen = Arc::default();
    let log = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let Some((line, headers)) = read_head(&mut reader) else {
                continue;
            };
            let target = line
                .split_whitespace()
                .take(2)
                .collect::<Vec<_>>()
                .join(" ");
            log.lock().unwrap().push((target.clone(), headers.clone()));
            answer(&target, &headers, &mut stream);
        }
    });
    (format!("http://{addr}"), seen)
}

fn with_header(base: &str) -> HttpStorage {
    let transport = Arc::new(ReqwestTransport::new().unwrap());
    let options = HttpOptions {
        headers: vec![("X-Api-Key".into(), "k3y".into())],
        retries: 0,
        ..HttpOptions::default()
    };
    HttpStorage::for_url(transport, base, None, options).unwrap()
}

#[tokio::test]
async fn hostile_bodies_are_bounded_and_416_is_an_answer() {
    let (url, _) = scripted(|target, _, out| {
        let head = |status: u16, extra: &str| {
            format!("HTTP/1.1 {status} X\r\nConnection: close\r\n{extra}\r\n")
        };
        let reply = match target {
            // 1 MiB for a 10-byte range.
            t if t.ends_with("/long206") => {
                let body = vec![7u8; 1 << 20];
                let mut r = head(206, "Content-Range: bytes 0-9/2000000\r\n").into_bytes();
                r.extend(body);
                r
            }
            // Range ignored, no Content-Length: streamed until the connection closes.
            t if t.ends_with("/endless") => {
                let _ = out.write_all(head(200, "").as_bytes());
                let chunk = vec![0u8; 1 << 20];
                for _ in 0..40 {
                    if out.write_all(&chunk).is_err() {
                        return;
                    }
                }
                return;
            }
            // Says 300 MiB: refused before reading.
            t if t.ends_with("/huge") => head(200, "Content-Length: 314572800\r\n").into_bytes(),
            t if t.ends_with("/empty") => {
                head(416, "Content-Range: bytes */0\r\nContent-Length: 0\r\n").into_bytes()
            }
            t if t.ends_with("/liar") => {
                head(416, "Content-Range: bytes */500\r\nContent-Length: 0\r\n").into_bytes()
            }
            _ => head(404, "Content-Length: 0\r\n").into_bytes(),
        };
        let _ = out.write_all(&reply);
    });
    let s = storage(&format!("{url}/t"));

    let e = s
        .get_range("long206", 0..10, Purpose::Other)
        .await
        .unwrap_err();
    assert_eq!(e.code(), "IO", "{e}");
    assert!(e.to_string().contains("longer than the 10 bytes"), "{e}");

    let e = s
        .get_range("endless", 0..10, Purpose::Other)
        .await
        .unwrap_err();
    assert_eq!(e.code(), "UNSUPPORTED", "{e}");
    assert!(e.to_string().contains("/t/endless"), "{e}");

    let e = s.get("huge", Purpose::CommitMetadata).await.unwrap_err();
    assert_eq!(e.code(), "UNSUPPORTED", "{e}");
    assert!(e.to_string().contains("over 256 MiB"), "{e}");

    let empty = s.read("empty", &[ByteRange::Suffix(8)], Purpose::Footer);
    let empty = empty.await.unwrap();
    assert_eq!((empty.parts[0].len(), empty.size), (0, Some(0)));
    let e = s.read("liar", &[ByteRange::Suffix(8)], Purpose::Footer);
    let e = e.await.unwrap_err();
    assert_eq!(e.code(), "IO", "{e}");
    assert!(e.to_string().contains("416"), "{e}");
}

#[tokio::test]
async fn redirects_keep_credentials_in_their_origin() {
    let (other, other_seen) = scripted(|_, _, out| {
        let _ =
            out.write_all(b"HTTP/1.1 200 X\r\nConnection: close\r\nContent-Length: 5\r\n\r\nother");
    });
    let to_other = other.clone();
    let (url, seen) = scripted(move |target, _, out| {
        let reply = match target {
            t if t.ends_with("/away") => format!(
                "HTTP/1.1 302 X\r\nConnection: close\r\nContent-Length: 0\r\nLocation: {to_other}/x?sig=1\r\n\r\n"
            ),
            t if t.ends_with("/moved") => "HTTP/1.1 301 X\r\nConnection: close\r\nContent-Length: 0\r\nLocation: /t/here\r\n\r\n".to_string(),
            t if t.ends_with("/here") => "HTTP/1.1 200 X\r\nConnection: close\r\nContent-Length: 4\r\n\r\nhere".to_string(),
            _ => "HTTP/1.1 404 X\r\nConnection: close\r\nContent-Length: 0\r\n\r\n".to_string(),
        };
        let _ = out.write_all(reply.as_bytes());
    });

    // With the table's header: followed within the origin, header and all...
    let s = with_header(&format!("{url}/t"));
    assert_eq!(&s.get("moved", Purpose::Other).await.unwrap()[..], b"here");
    assert!(seen
        .lock()
        .unwrap()
        .iter()
        .all(|(_, h)| h["x-api-key"] == "k3y"));
    // ...refused to another origin, which sees nothing.
    let e = s.get("away", Purpose::Other).await.unwrap_err();
    assert_eq!(e.code(), "IO", "{e}");
    let text = e.to_string();
    assert!(
        text.contains("another origin") && !text.contains("sig=1"),
        "{text}"
    );
    assert!(other_seen.lock().unwrap().is_empty());

    // Without credentials a redirect goes anywhere (a CDN, a public mirror).
    let public = storage(&format!("{url}/t"));
    assert_eq!(
        &public.get("away", Purpose::Other).await.unwrap()[..],
        b"other"
    );
    let other_seen = other_seen.lock().unwrap();
    assert_eq!(other_seen.len(), 1);
    assert!(!other_seen[0].1.contains_key("x-api-key"));
}

#[tokio::test]
async fn paths_never_leave_the_root() {
    let (url, seen) = scripted(|_, _, out| {
        let _ =
            out.write_all(b"HTTP/1.1 200 X\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok");
    });
    let s = with_header(&format!("{url}/t"));
    for bad in ["../secret", "a/../../etc/passwd", "a\\..\\..\\b"] {
        let e = s.get(bad, Purpose::Other).await.unwrap_err();
        assert_eq!(e.code(), "CORRUPT", "{bad}: {e}");
    }
    assert!(seen.lock().unwrap().is_empty());
}

fn json(out: &mut std::net::TcpStream, body: &str) {
    let head = format!(
        "HTTP/1.1 200 X\r\nConnection: close\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    let _ = out.write_all(head.as_bytes());
    let _ = out.write_all(body.as_bytes());
}

fn not_found(out: &mut std::net::TcpStream) {
    let _ = out.write_all(b"HTTP/1.1 404 X\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
}

#[tokio::test]
async fn listings_are_bounded_and_stay_in_the_table() {
    use hudi_edge::storage::listing::{MAX_LISTING_DEPTH, MAX_LISTING_REQUESTS};
    let dir = |name: &str| format!(r#"{{"name":"{name}","type":"directory"}}"#);
    let (url, seen) = scripted(move |target, _, out| {
        let path = target.split(' ').nth(1).unwrap_or("");
        match path {
            "/m/.hoodie/hudi-edge-manifest.json" => json(
                out,
                r#"{"format":"hudi-edge-manifest","version":1,"dirs":{"../other":[["x.parquet",1]]}}"#,
            ),
            p if p.ends_with("hudi-edge-manifest.json") => not_found(out),
            // Every directory under deep/ holds another.
            p if p.starts_with("/deep/") => json(out, &format!("[{}]", dir("d"))),
            // wide/ fans out to more directories than a listing may request.
            "/wide/" => {
                let all: Vec<String> = (0..MAX_LISTING_REQUESTS + 10)
                    .map(|i| dir(&format!("p{i}")))
                    .collect();
                json(out, &format!("[{}]", all.join(",")))
            }
            p if p.starts_with("/wide/") => json(out, "[]"),
            "/climb/" => json(out, r#"[{"name":"..\\..\\etc","type":"file","size":1}]"#),
            _ => not_found(out),
        }
    });

    let e = storage(&format!("{url}/deep"))
        .list("", true)
        .await
        .unwrap_err();
    assert_eq!(e.code(), "UNSUPPORTED", "{e}");
    assert!(
        e.to_string()
            .contains(&format!("over {MAX_LISTING_DEPTH} levels")),
        "{e}"
    );
    assert!(seen.lock().unwrap().len() <= MAX_LISTING_DEPTH + 2);

    // Listings running at once share one budget (a caller listing each folder it finds).
    seen.lock().unwrap().clear();
    let wide = storage(&format!("{url}/wide"));
    let (a, b) = tokio::join!(wide.list("", true), wide.list("", true));
    let e = a.unwrap_err();
    assert_eq!(e.code(), "UNSUPPORTED", "{e}");
    let text = e.to_string();
    assert!(
        text.contains("more than 5000 requests") && text.contains("/wide"),
        "{text}"
    );
    assert_eq!(b.unwrap_err().code(), "UNSUPPORTED");
    let made = seen.lock().unwrap().len();
    assert!(made <= MAX_LISTING_REQUESTS + 2, "{made} requests");
    // A listing after them starts afresh.
    assert!(wide.list("p1", true).await.unwrap().is_empty());

    // A name that climbs out of the page, a manifest directory that leaves the table.
    let e = storage(&format!("{url}/climb"))
        .list("", false)
        .await
        .unwrap_err();
    assert_eq!(e.code(), "CORRUPT", "{e}");
    let e = storage(&format!("{url}/m"))
        .list("", true)
        .await
        .unwrap_err();
    assert_eq!(e.code(), "CORRUPT", "{e}");
    assert!(e.to_string().contains("hudi-edge-manifest.json"), "{e}");
}

#[tokio::test]
async fn s3_requests_follow_no_redirect() {
    use hudi_edge::storage::object_store::{s3_storage, S3Options};
    let (other, other_seen) = scripted(|_, _, out| {
        let _ =
            out.write_all(b"HTTP/1.1 200 X\r\nConnection: close\r\nContent-Length: 5\r\n\r\nother");
    });
    let (url, seen) = scripted(move |_, _, out| {
        let reply = format!(
            "HTTP/1.1 302 X\r\nConnection: close\r\nContent-Length: 0\r\nLocation: {other}/bkt/t/f\r\n\r\n"
        );
        let _ = out.write_all(reply.as_bytes());
    });
    let o = S3Options {
        endpoint: Some(url),
        access_key_id: Some("AKIAEXAMPLE".into()),
        secret_access_key: Some("secret".into()),
        session_token: Some("s3ss10n".into()),
        force_path_style: Some(true),
        ..S3Options::default()
    };
    let s = s3_storage("s3://bkt/t", &o, 0, 4).unwrap();
    let e = s.get("f", Purpose::Other).await.unwrap_err();
    assert_eq!(e.code(), "IO", "{e}");
    assert!(!e.to_string().contains("s3ss10n"), "{e}");
    assert_eq!(seen.lock().unwrap().len(), 1);
    assert!(other_seen.lock().unwrap().is_empty());
}

/// object_store's S3 bodies obey the same limits as `HttpStorage`: a ranged answer gives no
/// more than was asked, and a declared length is never reserved before it is counted
/// (object_store's `bytes()` reserved 2^62 bytes here, for an object or a listing, and
/// panicked).
#[tokio::test]
async fn s3_bodies_are_bounded() {
    use hudi_edge::storage::object_store::{s3_storage, S3Options};
    let (url, _) = scripted(|target, _, out| {
        let reply = match target {
            // A 206 whose Content-Range matches the 10 bytes asked, with 1 MiB behind it.
            t if t.ends_with("/t/long206") => {
                let mut r = b"HTTP/1.1 206 X\r\nConnection: close\r\nContent-Range: bytes 0-9/2000000\r\nContent-Length: 1048576\r\n\r\n".to_vec();
                r.extend(vec![7u8; 1 << 20]);
                r
            }
            t if t.ends_with("/t/ok206") => b"HTTP/1.1 206 X\r\nConnection: close\r\nContent-Range: bytes 0-9/2000000\r\nContent-Length: 10\r\n\r\n0123456789".to_vec(),
            // Declares 2^62 bytes, sends two chunks.
            t if t.ends_with("/t/bomb") => {
                let _ = out.write_all(b"HTTP/1.1 200 X\r\nConnection: close\r\nContent-Length: 4611686018427387904\r\n\r\n");
                let _ = out.write_all(&[1u8; 4096]);
                let _ = out.flush();
                std::thread::sleep(std::time::Duration::from_millis(50));
                let _ = out.write_all(&[2u8; 4096]);
                return;
            }
            // A listing that declares 2^62 bytes, in two chunks: object_store collects
            // listings itself, reserving the declared length.
            t if t.contains("list-type=2") => {
                let _ = out.write_all(b"HTTP/1.1 200 X\r\nConnection: close\r\nContent-Length: 4611686018427387904\r\n\r\n<ListBucketResult>");
                let _ = out.flush();
                std::thread::sleep(std::time::Duration::from_millis(50));
                let _ = out.write_all(b"<Contents>");
                return;
            }
            // Says 300 MiB: refused before reading.
            t if t.ends_with("/t/huge") => {
                b"HTTP/1.1 200 X\r\nConnection: close\r\nContent-Length: 314572800\r\n\r\n".to_vec()
            }
            _ => b"HTTP/1.1 404 X\r\nConnection: close\r\nContent-Length: 0\r\n\r\n".to_vec(),
        };
        let _ = out.write_all(&reply);
    });
    let o = S3Options {
        endpoint: Some(url),
        access_key_id: Some("AKIAEXAMPLE".into()),
        secret_access_key: Some("secret".into()),
        force_path_style: Some(true),
        ..S3Options::default()
    };
    let s = s3_storage("s3://bkt/t", &o, 0, 4).unwrap();

    let ok = s.get_range("ok206", 0..10, Purpose::Other).await.unwrap();
    assert_eq!(&ok[..], b"0123456789");

    let e = s
        .get_range("long206", 0..10, Purpose::Other)
        .await
        .map(|b| b.len())
        .unwrap_err();
    assert_eq!(e.code(), "IO", "{e}");
    assert!(e.to_string().contains("longer than the 10 bytes"), "{e}");
    assert!(e.to_string().contains("s3://bkt/t/long206"), "{e}");

    let e = s.list("", true).await.unwrap_err();
    assert_eq!(e.code(), "IO", "{e}");

    for name in ["bomb", "huge"] {
        let e = s.get(name, Purpose::CommitMetadata).await;
        let e = e.map(|b| b.len()).unwrap_err();
        assert_eq!(e.code(), "UNSUPPORTED", "{e}");
        assert!(e.to_string().contains("over 256 MiB"), "{e}");
        assert!(e.to_string().contains(&format!("s3://bkt/t/{name}")), "{e}");
    }
}
