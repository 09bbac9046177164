//! Test helpers shared by the HFile and metadata-table tests: fixture tables (zips extracted
//! once per test process), a tiny HFile writer for shapes the fixtures lack (multi-level
//! indexes, many blocks, NONE codec, tags), and a minimal scan of MDT log files for their
//! HFILE_DATA blocks (the real log reader lives in `log_file`).

use std::future::Future;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use async_trait::async_trait;
use bytes::Bytes;

use super::checksum::crc32c;
use super::writer::{hadoop_vlong, proto_bytes, proto_varint, varint};
use super::Codec;
use crate::error::Result;
use crate::storage::{ByteRange, Capabilities, Fetched, ObjectMeta, Purpose, PutMode, Storage};

/// Extracts `tables/<rel>.zip` (e.g. `sample_table/cow/v9_txns_simple_meta`) into a temp
/// directory shared by test runs and returns the table's base path. Extraction goes to a
/// private directory first and is renamed into place, so concurrent runs never see half a table.
pub(crate) fn table(rel: &str) -> PathBuf {
    extract(&crate::log_file::test_util::fixtures_root(), rel)
}

/// A table of the hudi-rs writer matrix (`tests/data/hudi_rs/<name>.zip`), extracted as
/// [`table`] does.
pub(crate) fn hudi_rs_table(name: &str) -> PathBuf {
    extract(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/hudi_rs"),
        name,
    )
}

fn extract(root: &Path, rel: &str) -> PathBuf {
    static LOCK: Mutex<()> = Mutex::new(());
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let zip_path = root.join(format!("{rel}.zip"));
    let zip_len = std::fs::metadata(&zip_path)
        .unwrap_or_else(|e| panic!("fixture {}: {e}", zip_path.display()))
        .len();
    // The zip's size in the name: a changed fixture is extracted afresh.
    let key = format!("{}-{zip_len}", rel.replace('/', "_"));
    let base = std::env::temp_dir().join("hudi-edge-fixtures");
    let dir = base.join(&key);
    if !dir.is_dir() {
        let file = std::fs::File::open(&zip_path).expect("open fixture");
        let scratch = base.join(format!("{key}.{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&scratch);
        zip::ZipArchive::new(file)
            .and_then(|mut z| z.extract(&scratch))
            .expect("extract fixture");
        if std::fs::rename(&scratch, &dir).is_err() {
            // Another run got there first.
            let _ = std::fs::remove_dir_all(&scratch);
        }
    }
    dir.join(rel.rsplit('/').next().unwrap_or(rel))
}

/// The MDT tables the tests walk: (fixture, table version).
/// Data base files of a fixture table (not the metadata table's, not macOS resource forks).
pub(crate) fn data_base_files(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if path.is_dir() {
                if name != ".hoodie" && name != "__MACOSX" {
                    stack.push(path);
                }
            } else if name.ends_with(".parquet") && !name.starts_with('.') {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

pub(crate) const MDT_TABLES: &[&str] = &[
    "quickstart_trips_table/mor/avro/v8_trips_8i3u1d",
    "sample_table/mor/avro/v9_txns_simple_meta",
    "sample_table/cow/v9_txns_simple_meta",
    "sample_table/cow/v9_txns_nonpart_meta",
];

/// Files of `.hoodie/metadata/<partition>/` whose name satisfies `keep`, sorted:
/// (MDT partition, path).
pub(crate) fn mdt_files(root: &Path, keep: impl Fn(&str) -> bool) -> Vec<(String, PathBuf)> {
    let mdt = root.join(".hoodie/metadata");
    let mut out = Vec::new();
    for part in std::fs::read_dir(&mdt).expect("metadata dir").flatten() {
        let pname = part.file_name().to_string_lossy().into_owned();
        if pname.starts_with('.') || !part.path().is_dir() {
            continue;
        }
        for f in std::fs::read_dir(part.path())
            .expect("partition dir")
            .flatten()
        {
            if keep(&f.file_name().to_string_lossy()) {
                out.push((pname.clone(), f.path()));
            }
        }
    }
    out.sort();
    out
}

pub(crate) fn mdt_hfiles(root: &Path) -> Vec<(String, PathBuf)> {
    mdt_files(root, |n| n.ends_with(".hfile"))
}

pub(crate) fn mdt_log_files(root: &Path) -> Vec<(String, PathBuf)> {
    mdt_files(root, |n| n.contains(".log."))
}

/// HFILE_DATA blocks (type 4) of a log file: (SCHEMA header, content). Test-only and minimal:
/// format version 1, no corruption handling.
pub(crate) fn log_hfile_blocks(log: &[u8]) -> Vec<(Option<String>, Bytes)> {
    let be32 = |p: usize| i32::from_be_bytes(log[p..p + 4].try_into().unwrap());
    let be64 = |p: usize| i64::from_be_bytes(log[p..p + 8].try_into().unwrap());
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < log.len() {
        assert_eq!(&log[pos..pos + 6], b"#HUDI#", "log block magic at {pos}");
        let block_len = be64(pos + 6) as usize;
        let block_type = be32(pos + 18);
        let mut p = pos + 22;
        let mut schema = None;
        for _ in 0..be32(p) {
            let (key, len) = (be32(p + 4), be32(p + 8) as usize);
            if key == 2 {
                schema = Some(String::from_utf8(log[p + 12..p + 12 + len].to_vec()).unwrap());
            }
            p += 8 + len;
        }
        p += 4;
        let content_len = be64(p) as usize;
        if block_type == 4 {
            out.push((
                schema,
                Bytes::copy_from_slice(&log[p + 8..p + 8 + content_len]),
            ));
        }
        pos += 14 + block_len;
    }
    out
}

/// Shape of a synthetic HFile.
#[derive(Debug, Clone)]
pub(crate) struct Spec {
    pub cells_per_block: usize,
    pub codec: Codec,
    /// 0 NULL (zero bytes reserved, like Hudi), 2 CRC32C (like HBase).
    pub checksum: u8,
    pub bytes_per_checksum: u32,
    /// Entries per non-root index block; 0 = single-level index.
    pub fanout: usize,
    /// Full KeyValue keys in the index (HBase) instead of `[u16][row]` (Hudi).
    pub hbase_keys: bool,
    pub tags: bool,
    pub meta_blocks: Vec<(String, Vec<u8>)>,
}

impl Default for Spec {
    fn default() -> Self {
        Spec {
            cells_per_block: 16,
            codec: Codec::Gz,
            checksum: 0,
            bytes_per_checksum: 16384,
            fanout: 0,
            hbase_keys: false,
            tags: false,
            meta_blocks: Vec::new(),
        }
    }
}

struct Written {
    offset: u64,
    size: u32,
    key: Vec<u8>,
}

fn kv_key(row: &[u8]) -> Vec<u8> {
    let mut k = (row.len() as u16).to_be_bytes().to_vec();
    k.extend_from_slice(row);
    k.push(0); // family length
    k.extend_from_slice(&i64::MAX.to_be_bytes());
    k.push(4); // Put
    k
}

fn index_key(row: &[u8], spec: &Spec) -> Vec<u8> {
    if spec.hbase_keys {
        return kv_key(row);
    }
    let mut k = (row.len() as u16).to_be_bytes().to_vec();
    k.extend_from_slice(row);
    k
}

fn put_block(out: &mut Vec<u8>, magic: &[u8; 8], payload: &[u8], spec: &Spec) -> (u64, u32) {
    let body = match spec.codec {
        Codec::None => payload.to_vec(),
        Codec::Gz => {
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(6));
            gz.write_all(payload).unwrap();
            gz.finish().unwrap()
        }
    };
    let offset = out.len();
    let data_len = 33 + body.len();
    let chunks = data_len.div_ceil(spec.bytes_per_checksum as usize);
    out.extend_from_slice(magic);
    out.extend_from_slice(&((body.len() + 4 * chunks) as i32).to_be_bytes());
    out.extend_from_slice(&(payload.len() as i32).to_be_bytes());
    out.extend_from_slice(&(-1i64).to_be_bytes());
    out.push(spec.checksum);
    out.extend_from_slice(&spec.bytes_per_checksum.to_be_bytes());
    out.extend_from_slice(&(data_len as i32).to_be_bytes());
    out.extend_from_slice(&body);
    let sums: Vec<u8> = out[offset..offset + data_len]
        .chunks(spec.bytes_per_checksum as usize)
        .flat_map(|c| match spec.checksum {
            2 => crc32c(c).to_be_bytes(),
            _ => [0; 4],
        })
        .collect();
    out.extend_from_slice(&sums);
    (offset as u64, (out.len() - offset) as u32)
}

fn root_payload(entries: &[Written], mid_key: bool) -> Vec<u8> {
    let mut p = Vec::new();
    for e in entries {
        p.extend_from_slice(&(e.offset as i64).to_be_bytes());
        p.extend_from_slice(&(e.size as i32).to_be_bytes());
        hadoop_vlong(&mut p, e.key.len() as i64);
        p.extend_from_slice(&e.key);
    }
    if mid_key {
        // HBase appends mid-key metadata to a multi-level root; readers skip it.
        p.extend_from_slice(&[0xAB; 16]);
    }
    p
}

fn non_root_payload(entries: &[Written]) -> Vec<u8> {
    let mut p = (entries.len() as i32).to_be_bytes().to_vec();
    let mut at = 0i32;
    for e in entries {
        p.extend_from_slice(&at.to_be_bytes());
        at += 12 + e.key.len() as i32;
    }
    p.extend_from_slice(&at.to_be_bytes());
    for e in entries {
        p.extend_from_slice(&(e.offset as i64).to_be_bytes());
        p.extend_from_slice(&(e.size as i32).to_be_bytes());
        p.extend_from_slice(&e.key);
    }
    p
}

fn cells_payload(cells: &[(Vec<u8>, Vec<u8>)], spec: &Spec) -> Vec<u8> {
    let mut p = Vec::new();
    for (row, value) in cells {
        let key = kv_key(row);
        p.extend_from_slice(&(key.len() as i32).to_be_bytes());
        p.extend_from_slice(&(value.len() as i32).to_be_bytes());
        p.extend_from_slice(&key);
        p.extend_from_slice(value);
        if spec.tags {
            p.extend_from_slice(&3u16.to_be_bytes());
            p.extend_from_slice(&[1, 0, 7]);
        }
        p.push(0); // MVCC
    }
    p
}

fn file_info_payload(entries: &[(&str, Vec<u8>)]) -> Vec<u8> {
    let mut msg = Vec::new();
    for (k, v) in entries {
        let mut pair = Vec::new();
        proto_bytes(&mut pair, 1, k.as_bytes());
        proto_bytes(&mut pair, 2, v);
        proto_bytes(&mut msg, 1, &pair);
    }
    let mut p = b"PBUF".to_vec();
    varint(&mut p, msg.len() as u64);
    p.extend_from_slice(&msg);
    p
}

/// Writes `cells` (sorted, unique rows) as an HFile v3 of the given shape.
pub(crate) fn write_hfile(cells: &[(Vec<u8>, Vec<u8>)], spec: &Spec) -> Vec<u8> {
    let mut out = Vec::new();
    let mut level: Vec<Written> = cells
        .chunks(spec.cells_per_block.max(1))
        .map(|chunk| {
            let (offset, size) =
                put_block(&mut out, b"DATABLK*", &cells_payload(chunk, spec), spec);
            Written {
                offset,
                size,
                key: index_key(&chunk[0].0, spec),
            }
        })
        .collect();
    let mut levels = 1u64;
    while spec.fanout > 0 && level.len() > spec.fanout {
        let magic = if levels == 1 {
            b"IDXLEAF2"
        } else {
            b"IDXINTE2"
        };
        level = level
            .chunks(spec.fanout)
            .map(|chunk| {
                let (offset, size) = put_block(&mut out, magic, &non_root_payload(chunk), spec);
                Written {
                    offset,
                    size,
                    key: chunk[0].key.clone(),
                }
            })
            .collect();
        levels += 1;
    }
    let metas: Vec<Written> = spec
        .meta_blocks
        .iter()
        .map(|(name, payload)| {
            let (offset, size) = put_block(&mut out, b"METABLKc", payload, spec);
            Written {
                offset,
                size,
                key: name.as_bytes().to_vec(),
            }
        })
        .collect();
    let load_on_open = out.len() as u64;
    put_block(
        &mut out,
        b"IDXROOT2",
        &root_payload(&level, levels > 1),
        spec,
    );
    put_block(&mut out, b"IDXROOT2", &root_payload(&metas, false), spec);
    let file_info_offset = out.len() as u64;
    let mut info = vec![
        ("KEY_VALUE_VERSION", 1i32.to_be_bytes().to_vec()),
        ("MAX_MEMSTORE_TS_KEY", 0i64.to_be_bytes().to_vec()),
        ("schema", b"{\"type\":\"string\"}".to_vec()),
    ];
    if spec.tags {
        info.push(("MAX_TAGS_LEN", 3i32.to_be_bytes().to_vec()));
    }
    put_block(&mut out, b"FILEINF2", &file_info_payload(&info), spec);

    let mut t = Vec::new();
    proto_varint(&mut t, 1, file_info_offset);
    proto_varint(&mut t, 2, load_on_open);
    proto_varint(&mut t, 5, level.len() as u64);
    proto_varint(&mut t, 6, metas.len() as u64);
    proto_varint(&mut t, 7, cells.len() as u64);
    proto_varint(&mut t, 8, levels);
    proto_varint(&mut t, 9, if cells.is_empty() { u64::MAX } else { 0 });
    proto_bytes(
        &mut t,
        11,
        b"org.apache.hudi.io.storage.HoodieHBaseKVComparator",
    );
    proto_varint(&mut t, 12, if spec.codec == Codec::Gz { 1 } else { 2 });
    let trailer_at = out.len();
    out.extend_from_slice(b"TRABLK\"$");
    varint(&mut out, t.len() as u64);
    out.extend_from_slice(&t);
    out.resize(trailer_at + 4092, 0);
    out.extend_from_slice(&[0, 0, 0, 3]);
    out
}

/// Yields once before each read, so that requests issued together are in flight together
/// (an in-memory store otherwise answers each before the next starts).
#[derive(Debug)]
pub(crate) struct Yielding(pub Arc<dyn Storage>);

struct YieldOnce(bool);

impl Future for YieldOnce {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            return Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

#[async_trait]
impl Storage for Yielding {
    fn location(&self) -> String {
        self.0.location()
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            lists_after: false,
            ..self.0.capabilities()
        }
    }
    async fn read(&self, path: &str, ranges: &[ByteRange], purpose: Purpose) -> Result<Fetched> {
        YieldOnce(false).await;
        self.0.read(path, ranges, purpose).await
    }
    async fn head(&self, path: &str) -> Result<ObjectMeta> {
        self.0.head(path).await
    }
    async fn list(&self, prefix: &str, recursive: bool) -> Result<Vec<ObjectMeta>> {
        self.0.list(prefix, recursive).await
    }
    async fn put(&self, path: &str, data: Bytes, mode: PutMode) -> Result<ObjectMeta> {
        self.0.put(path, data, mode).await
    }
    async fn delete(&self, path: &str) -> Result<()> {
        self.0.delete(path).await
    }
}
