//! The manifest, autoindex pages and S3 pages, parsed and listed.

use super::*;
use crate::storage::ObjectMeta;

fn files() -> Vec<ObjectMeta> {
    vec![
        ObjectMeta::file(".hoodie/hoodie.properties", 10),
        ObjectMeta::file(".hoodie/timeline/1_2.commit", 20),
        ObjectMeta::file(".hoodie/.temp/1/marker", 1),
        ObjectMeta::file(MANIFEST_PATH, 1),
        ObjectMeta::file("a=1/b=2/f.parquet", 30),
        ObjectMeta::file("a=1/.f.log.1_0", 40),
        ObjectMeta::file("root.parquet", 50),
    ]
}

#[test]
fn manifest_round_trip_and_listing() {
    let m = Manifest::from_files(&files());
    let m = Manifest::parse(&m.to_json(), MANIFEST_PATH).unwrap();
    assert_eq!(m.num_files(), 5);
    let names = |v: Vec<ObjectMeta>| {
        let mut v: Vec<_> = v.into_iter().map(|m| (m.path, m.is_dir)).collect();
        v.sort();
        v
    };
    assert_eq!(
        names(m.list("", false)),
        vec![
            (".hoodie".into(), true),
            ("a=1".into(), true),
            ("root.parquet".into(), false)
        ]
    );
    assert_eq!(
        names(m.list("a=1", false)),
        vec![("a=1/.f.log.1_0".into(), false), ("a=1/b=2".into(), true)]
    );
    assert_eq!(names(m.list("a=1/", true)).len(), 2);
    assert_eq!(names(m.list(".hoodie/timeline", false)).len(), 1);
    assert!(m.list("nope", true).is_empty());
    assert!(Manifest::parse(b"{}", "m").is_err());
    assert!(Manifest::parse(br#"{"format":"x","version":1,"dirs":{}}"#, "m").is_err());
}

#[test]
fn manifest_and_listing_entries_stay_in_the_table() {
    let parse = |dirs: &str| {
        let json = format!(r#"{{"format":"hudi-edge-manifest","version":1,"dirs":{dirs}}}"#);
        Manifest::parse(json.as_bytes(), MANIFEST_PATH)
    };
    let m = parse(r#"{"a/./b/":[["f",1]]}"#).unwrap();
    assert_eq!(m.list("a/b", false)[0].path, "a/b/f");
    for bad in [
        r#"{"../x":[["f",1]]}"#,
        r#"{"a":[["../f",1]]}"#,
        r#"{"/etc":[]}"#,
    ] {
        let e = parse(bad).unwrap_err();
        assert_eq!(
            (e.code(), e.object()),
            ("CORRUPT", Some(MANIFEST_PATH)),
            "{bad}"
        );
    }
    let page = br#"[{"name":"..","type":"directory"},{"name":"a/../../b","type":"file"}]"#;
    assert_eq!(parse_autoindex(page, "p").unwrap_err().code(), "CORRUPT");
    #[cfg(feature = "http")]
    {
        let xml = br#"<ListBucketResult><IsTruncated>false</IsTruncated>
<Contents><Key>t/../../x</Key><Size>1</Size></Contents></ListBucketResult>"#;
        let e = parse_s3_list(xml, "t", "s3://b/t").unwrap_err();
        assert_eq!((e.code(), e.object()), ("CORRUPT", Some("s3://b/t")));
    }
}

#[test]
fn autoindex_pages() {
    let body = br#"[{ "name":"timeline", "type":"directory", "mtime":"Tue, 10 Oct 2023 10:00:00 GMT" },
            { "name":"hoodie.properties", "type":"file", "mtime":"Tue, 10 Oct 2023 10:00:00 GMT", "size":942 }]"#;
    let v = parse_autoindex(body, ".hoodie/").unwrap();
    assert_eq!(v[0].path, ".hoodie/timeline");
    assert!(v[0].is_dir);
    assert_eq!(v[1].size, 942);
    assert_eq!(v[1].last_modified_ms, Some(1696932000000));
    // A host without a JSON index cannot list; the table is not damaged.
    let e = parse_autoindex(b"<!DOCTYPE HTML>\n<html>", ".hoodie/timeline").unwrap_err();
    assert_eq!(e.code(), "UNSUPPORTED");
    assert!(e.to_string().contains("HTML page"), "{e}");
    assert!(
        e.to_string().contains(".hoodie/hudi-edge-manifest.json"),
        "{e}"
    );
    assert!(autoindex_may_list(".hoodie/timeline").is_ok());
    assert!(autoindex_may_list(".hoodie/metadata/.hoodie/timeline").is_ok());
    assert!(autoindex_may_list(".hoodie/metadata/files").is_err());
    assert!(autoindex_may_list(".hoodie/archived").is_err());
}

#[cfg(feature = "http")]
#[test]
fn s3_pages() {
    let xml = br#"<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name><Prefix>t/</Prefix>
<IsTruncated>true</IsTruncated><NextContinuationToken>tok&amp;1</NextContinuationToken>
<Contents><Key>t/a&amp;b.parquet</Key><LastModified>2024-01-02T03:04:05.000Z</LastModified><ETag>&quot;e1&quot;</ETag><Size>12</Size></Contents>
<CommonPrefixes><Prefix>t/.hoodie/</Prefix></CommonPrefixes></ListBucketResult>"#;
    let p = parse_s3_list(xml, "t", "list").unwrap();
    assert_eq!(p.next_token.as_deref(), Some("tok&1"));
    assert_eq!(p.objects[0].path, "a&b.parquet");
    assert_eq!(p.objects[0].etag.as_deref(), Some("\"e1\""));
    assert_eq!(p.objects[0].size, 12);
    assert_eq!(p.objects[1].path, ".hoodie");
    assert!(p.objects[1].is_dir);
    assert!(parse_s3_list(b"<Error><Code>AccessDenied</Code></Error>", "", "l").is_err());
    assert!(parse_s3_list(b"junk", "", "l").is_err());
    assert_eq!(s3_dir_key("t/x", ""), "t/x/");
    assert_eq!(s3_dir_key("", ""), "");
    assert_eq!(s3_dir_key("", "p=1"), "p=1/");
    assert_eq!(
        s3_list_query("t", ".hoodie", false, Some("a b"), None),
        "list-type=2&prefix=t%2F.hoodie%2F&delimiter=%2F&continuation-token=a%20b"
    );
    assert_eq!(
        s3_list_query("t", "", true, None, Some(".hoodie0")),
        "list-type=2&prefix=t%2F&start-after=t%2F.hoodie0"
    );
}
