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
