//! Damaged copies of a fixture's base file: footers whose column chunks leave the file.

use std::sync::Arc;

use bytes::Bytes;
use parquet::file::metadata::{
    ColumnChunkMetaData, ColumnChunkMetaDataBuilder, KeyValue, ParquetMetaData,
    ParquetMetaDataReader, ParquetMetaDataWriter,
};

use super::footer::FOOTER_HEAD;
use super::*;
use crate::log_file::data::decode_parquet_block;
use crate::storage::memory::MemoryStorage;

const PATH: &str = "p/base.parquet";

/// `sample_table/mor/parquet/v6_simplekeygen_hivestyle_no_metafields`, one row group.
fn fixture() -> Bytes {
    Bytes::from_static(include_bytes!(
        "../../tests/fuzz/corpus/parquet_footer/v6_base.parquet"
    ))
}

/// The fixture with its footer rewritten after `damage` changed every column chunk.
fn damaged(damage: impl Fn(ColumnChunkMetaDataBuilder) -> ColumnChunkMetaDataBuilder) -> Bytes {
    let file = fixture();
    rewritten(file.to_vec(), |c| damage(c.clone().into_builder()))
}

/// Where the fixture's footer starts, and the footer.
fn fixture_footer() -> (usize, ParquetMetaData) {
    let file = fixture();
    let meta_len = u32::from_le_bytes(file[file.len() - 8..file.len() - 4].try_into().unwrap());
    let data_end = file.len() - 8 - meta_len as usize;
    let metadata = ParquetMetaDataReader::decode_metadata(&file[data_end..file.len() - 8]).unwrap();
    (data_end, metadata)
}

/// `file` (the fixture, its data grown or not) with the fixture's footer, each column
/// chunk's metadata rewritten by `damage`.
fn rewritten(
    file: Vec<u8>,
    damage: impl Fn(&ColumnChunkMetaData) -> ColumnChunkMetaDataBuilder,
) -> Bytes {
    let (data_end, metadata) = fixture_footer();
    let data_end = data_end + file.len() - fixture().len();
    let groups = metadata
        .row_groups()
        .iter()
        .map(|g| {
            let columns = g
                .columns()
                .iter()
                .map(|c| damage(c).build().unwrap())
                .collect();
            g.clone()
                .into_builder()
                .set_column_metadata(columns)
                .build()
                .unwrap()
        })
        .collect();
    let metadata: ParquetMetaData = metadata.into_builder().set_row_groups(groups).build();
    let mut out = file[..data_end].to_vec();
    ParquetMetaDataWriter::new(&mut out, &metadata)
        .finish()
        .unwrap();
    out.into()
}

fn read(bytes: Bytes) -> Result<()> {
    let storage = MemoryStorage::new();
    storage.insert(PATH, bytes, None);
    let storage: Arc<dyn Storage> = Arc::new(storage);
    let footer = futures::executor::block_on(read_footer(storage.as_ref(), PATH))?;
    let groups = matching_row_groups(&footer, None);
    let stream = stream_row_groups(storage, PATH, footer, groups, None, 1024)?;
    futures::executor::block_on(stream.try_collect::<Vec<_>>()).map(drop)
}

fn assert_corrupt(r: Result<()>, needle: &str) {
    match r {
        Err(e @ HudiError::Corrupt { .. }) => {
            let msg = e.to_string();
            assert!(msg.contains(PATH) && msg.contains(needle), "{msg}");
        }
        other => panic!("expected CORRUPT, got {other:?}"),
    }
}

#[test]
fn the_fixture_reads() {
    read(fixture()).unwrap();
    decode_parquet_block(fixture(), PATH).unwrap();
}

#[test]
fn column_chunks_outside_the_file_are_corrupt_not_panics() {
    type Damage = fn(ColumnChunkMetaDataBuilder) -> ColumnChunkMetaDataBuilder;
    let cases: [(&str, Damage); 6] = [
        ("data page before the file", |c| {
            c.set_dictionary_page_offset(None).set_data_page_offset(-5)
        }),
        ("dictionary page before the file", |c| {
            c.set_dictionary_page_offset(Some(-1))
        }),
        ("negative length", |c| c.set_total_compressed_size(-100)),
        ("past the end", |c| c.set_total_compressed_size(1 << 40)),
        ("starting past the end", |c| {
            c.set_dictionary_page_offset(None)
                .set_data_page_offset(i64::MAX - 10)
        }),
        ("into the footer", |c| c.set_total_compressed_size(8000)),
    ];
    for (what, damage) in cases {
        let bytes = damaged(damage);
        assert_corrupt(read(bytes.clone()), "outside the file");
        // The same file as a log file's Parquet data block.
        assert_corrupt(
            decode_parquet_block(bytes, PATH).map(drop),
            "outside the file",
        );
        eprintln!("{what}: CORRUPT");
    }
}

#[test]
fn footer_longer_than_the_file_is_corrupt() {
    let mut bytes = fixture().to_vec();
    let n = bytes.len();
    bytes[n - 8..n - 4].copy_from_slice(&u32::MAX.to_le_bytes());
    assert_corrupt(read(bytes.clone().into()), "exceeds file size");
    let e = decode_parquet_block(bytes.into(), PATH).unwrap_err();
    assert!(e.to_string().contains(PATH), "{e}");
}

/// An unknown footer field holding 2³¹-1 bools in nine bytes: the `parquet` crate skips
/// it element by element, consuming nothing (seconds per such field).
#[test]
fn footer_with_a_huge_bool_list_is_corrupt_at_once() {
    let file = fixture();
    let (data_end, _) = fixture_footer();
    // Up to the footer's stop byte, the field, the stop byte again.
    let mut out = file[..file.len() - 9].to_vec();
    out.extend(BOOLS);
    out.push(0);
    out.extend((out.len() as u32 - data_end as u32).to_le_bytes());
    out.extend(b"PAR1");
    assert_corrupt_at_once(out.into());
}

/// Field 100 (explicit id), a list of i32::MAX bools.
const BOOLS: [u8; 9] = [0x09, 0xc8, 0x01, 0xf1, 0xff, 0xff, 0xff, 0xff, 0x07];

fn assert_corrupt_at_once(bytes: Bytes) {
    let start = std::time::Instant::now();
    assert_corrupt(read(bytes.clone()), "collection of bools");
    let block = decode_parquet_block(bytes, PATH).map(drop);
    assert_corrupt(block, "collection of bools");
    assert!(start.elapsed().as_millis() < 500);
}

/// The first page header of the first column chunk with an unknown field of 2³¹-1 bools
/// first (found by reasoning from the footer finding: page headers share the crate's skip).
#[test]
fn page_header_with_a_huge_bool_list_is_corrupt_at_once() {
    let file = fixture();
    let (_, metadata) = fixture_footer();
    let first = metadata
        .row_group(0)
        .columns()
        .iter()
        .map(|c| c.byte_range().0)
        .min()
        .unwrap();
    let mut data = file[..first as usize].to_vec();
    data.extend(BOOLS);
    data.extend(&file[first as usize..]);
    let n = BOOLS.len() as i64;
    let bytes = rewritten(data, |c| {
        let shift = |o: i64| if o > first as i64 { o + n } else { o };
        let b = c.clone().into_builder();
        let grown = c.byte_range().0 == first;
        b.set_data_page_offset(shift(c.data_page_offset()))
            .set_dictionary_page_offset(c.dictionary_page_offset().map(shift))
            .set_total_compressed_size(c.compressed_size() + if grown { n } else { 0 })
    });
    assert_corrupt_at_once(bytes);
}

/// Every batch of a file as the `parquet` crate reads it by itself (its own map reader).
fn crate_batches(file: Bytes) -> Vec<RecordBatch> {
    let reader = ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .build()
        .unwrap();
    reader.collect::<std::result::Result<_, _>>().unwrap()
}

fn our_batches(file: Bytes, columns: Option<&[String]>) -> Vec<RecordBatch> {
    let storage = MemoryStorage::new();
    storage.insert(PATH, file, None);
    let storage: Arc<dyn Storage> = Arc::new(storage);
    let footer = futures::executor::block_on(read_footer(storage.as_ref(), PATH)).unwrap();
    let groups = matching_row_groups(&footer, None);
    let stream = stream_row_groups(storage, PATH, footer, groups, columns, 1024).unwrap();
    futures::executor::block_on(stream.try_collect::<Vec<_>>()).unwrap()
}

fn one(batches: &[RecordBatch]) -> RecordBatch {
    arrow_select::concat::concat_batches(&batches[0].schema(), batches).unwrap()
}

/// Maps are read as lists of entries and turned back into maps: the same batches as the
/// crate's own map reader gives, whole and projected, from storage and from memory.
#[test]
fn map_columns_read_as_the_crate_reads_them() {
    let expected = one(&crate_batches(fixture()));
    let maps: Vec<String> = expected
        .schema()
        .fields()
        .iter()
        .filter(|f| matches!(f.data_type(), arrow_schema::DataType::Map(..)))
        .map(|f| f.name().clone())
        .collect();
    assert!(!maps.is_empty(), "the fixture has a map column");
    assert_eq!(one(&our_batches(fixture(), None)), expected);
    assert_eq!(
        one(&decode_parquet_block(fixture(), PATH).unwrap()),
        expected
    );
    let columns = vec![maps[0].clone(), "_hoodie_record_key".to_string()];
    let projected = one(&our_batches(fixture(), Some(&columns)));
    let wanted: Vec<usize> = ["_hoodie_record_key", &maps[0]]
        .iter()
        .map(|n| expected.schema().index_of(n).unwrap())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    assert_eq!(projected, expected.project(&wanted).unwrap());
}

/// Maps inside maps, lists and structs, nullable or not, with the Arrow schema the writer
/// embeds (the crate's hints), written by arrow-rs: read back as the crate reads them.
#[test]
fn nested_map_columns_read_as_the_crate_reads_them() {
    use arrow_array::builder::{Int32Builder, ListBuilder, MapBuilder, StringBuilder};
    use arrow_array::{Array, StructArray};
    let mut inner = MapBuilder::new(None, StringBuilder::new(), Int32Builder::new());
    let mut outer = MapBuilder::new(
        None,
        StringBuilder::new(),
        MapBuilder::new(None, StringBuilder::new(), Int32Builder::new()),
    );
    let mut listed = ListBuilder::new(MapBuilder::new(
        None,
        StringBuilder::new(),
        Int32Builder::new(),
    ));
    for row in 0..300i32 {
        if row % 7 == 3 {
            inner.append(false).unwrap();
            outer.append(false).unwrap();
            listed.append(false);
            continue;
        }
        for k in 0..row % 4 {
            inner.keys().append_value(format!("k{k}"));
            if k == 1 {
                inner.values().append_null();
            } else {
                inner.values().append_value(row * k);
            }
            outer.keys().append_value(format!("o{k}"));
            for j in 0..k {
                outer.values().keys().append_value(format!("i{j}"));
                outer.values().values().append_value(j);
            }
            outer.values().append(k != 2).unwrap();
            for j in 0..(row + k) % 3 {
                listed.values().keys().append_value(format!("l{j}"));
                listed.values().values().append_value(j);
            }
            listed.values().append(true).unwrap();
        }
        inner.append(true).unwrap();
        outer.append(true).unwrap();
        listed.append(true);
    }
    let inner = Arc::new(inner.finish()) as ArrayRef;
    let in_struct = StructArray::from(vec![(
        Arc::new(arrow_schema::Field::new(
            "m",
            inner.data_type().clone(),
            true,
        )),
        inner.clone(),
    )]);
    let batch = RecordBatch::try_from_iter([
        ("inner", inner),
        ("outer", Arc::new(outer.finish()) as ArrayRef),
        ("listed", Arc::new(listed.finish()) as ArrayRef),
        ("in_struct", Arc::new(in_struct) as ArrayRef),
    ])
    .unwrap();
    let props = parquet::file::properties::WriterProperties::builder()
        .set_max_row_group_row_count(Some(128))
        .set_data_page_row_count_limit(50)
        .build();
    let file = parquet_of(&batch, props);
    let expected = one(&crate_batches(file.clone()));
    assert_eq!(expected.num_rows(), 300);
    assert_eq!(one(&our_batches(file.clone(), None)), expected);
    assert_eq!(
        one(&decode_parquet_block(file.clone(), PATH).unwrap()),
        expected
    );
    let columns = vec!["listed".to_string()];
    assert_eq!(
        one(&our_batches(file, Some(&columns))),
        expected.project(&[2]).unwrap()
    );
}

/// The fuzz finding: a map whose keys and values decode to different lengths made the
/// crate's map reader unwrap its inner error (an abort in wasm); now it is `CORRUPT`, found
/// in the value column's definition levels before the crate decodes them.
#[test]
fn a_damaged_map_column_is_corrupt_not_a_panic() {
    let file = Bytes::from_static(include_bytes!(
        "../../tests/fuzz/regressions/parquet_footer/map_inner_error_unwrapped.parquet"
    ));
    let needle = "column mapField.key_value.value.map_field_value_struct_f2: page 0: \
                  definition levels";
    assert_corrupt(read(file.clone()), needle);
    assert_corrupt(decode_parquet_block(file, PATH).map(drop), needle);
}

/// The fixture with its key-value metadata replaced by `pairs` (in that order, before the
/// footer's `created_by` and column orders).
fn with_pairs(pairs: &[(&str, usize)]) -> Bytes {
    let (data_end, metadata) = fixture_footer();
    let pairs = pairs
        .iter()
        .map(|(k, n)| KeyValue::new(k.to_string(), "v".repeat(*n)))
        .collect();
    let schema = metadata.file_metadata().schema_descr_ptr();
    let groups = metadata.row_groups().to_vec();
    let metadata = rebuilt(&metadata, pairs, schema, groups);
    let mut out = fixture()[..data_end].to_vec();
    ParquetMetaDataWriter::new(&mut out, &metadata)
        .finish()
        .unwrap();
    out.into()
}

/// `batch` as a Parquet file written by the crate with `props`.
fn parquet_of(batch: &RecordBatch, props: parquet::file::properties::WriterProperties) -> Bytes {
    let mut file = Vec::new();
    let mut writer =
        parquet::arrow::ArrowWriter::try_new(&mut file, batch.schema(), Some(props)).unwrap();
    writer.write(batch).unwrap();
    writer.close().unwrap();
    file.into()
}

/// Reads the footer of `file`: the footer, and the footer bytes and requests it cost.
fn footer_and_cost(file: Bytes) -> (Footer, u64, u64) {
    let storage = MemoryStorage::new();
    storage.insert(PATH, file, None);
    let counted = crate::storage::Instrumented::new(Arc::new(storage));
    let stats = counted.stats();
    let footer = futures::executor::block_on(read_footer(&counted, PATH)).unwrap();
    let io = stats.snapshot();
    (footer, io.bytes, io.requests)
}

#[test]
fn big_unfetched_footer_values_are_skipped_and_the_rest_kept() {
    let bloom = "org.apache.hudi.bloomfilter";
    // A bloom filter the size Hudi writes, between small pairs.
    let file = with_pairs(&[
        ("first", 10),
        (bloom, 430_000),
        ("hoodie_min_record_key", 3),
    ]);
    let (footer, bytes, requests) = footer_and_cost(file.clone());
    assert_eq!(requests, 2, "the tail, then the footer's head");
    assert!(bytes <= FOOTER_PREFETCH + FOOTER_HEAD, "{bytes} bytes");
    assert_eq!(footer.key_value("first"), Some("vvvvvvvvvv"));
    assert_eq!(footer.key_value("hoodie_min_record_key"), Some("vvv"));
    assert_eq!(footer.key_value(bloom), None);
    let meta_len = u32::from_le_bytes(file[file.len() - 8..file.len() - 4].try_into().unwrap());
    let whole = &file[file.len() - 8 - meta_len as usize..file.len() - 8];
    let whole = ParquetMetaDataReader::decode_metadata(whole).unwrap();
    let trimmed = footer.parquet();
    assert!(trimmed.row_groups() == whole.row_groups());
    let (t, w) = (trimmed.file_metadata(), whole.file_metadata());
    assert_eq!(t.created_by(), w.created_by());
    assert_eq!(t.column_orders(), w.column_orders());
    assert!(t.schema_descr() == w.schema_descr());
    read(file).unwrap();

    // A small value that neither read held is fetched, not dropped; big ones are dropped.
    let file = with_pairs(&[("a", 20_000), ("middle", 3000), ("b", 20_000), ("last", 1)]);
    let (footer, _, requests) = footer_and_cost(file);
    assert_eq!(requests, 3, "the tail, the head, the small value");
    assert_eq!(footer.key_value("middle").map(str::len), Some(3000));
    assert_eq!(footer.key_value("last"), Some("v"));
    assert!(footer.key_value("a").is_none() && footer.key_value("b").is_none());

    // Footers that fit the tail read cost one request and keep every pair.
    let (footer, _, requests) = footer_and_cost(with_pairs(&[("a", 100)]));
    assert_eq!(
        (requests, footer.key_value("a").map(str::len)),
        (1, Some(100))
    );
}

#[test]
fn a_footer_whose_big_value_runs_past_it_is_corrupt() {
    let mut file = with_pairs(&[("a", 10), ("b", 200_000), ("c", 1)]).to_vec();
    // The varint length of b's value (200,000 = 0xc0 0x9a 0x0c) claims 2⁴⁰ bytes instead.
    let at = file
        .windows(3)
        .position(|w| w == [0xc0, 0x9a, 0x0c])
        .unwrap();
    file.splice(at..at + 3, [0x80, 0x80, 0x80, 0x80, 0x80, 0x20]);
    let n = file.len();
    let meta_len = u32::from_le_bytes(file[n - 8..n - 4].try_into().unwrap()) + 3;
    file[n - 8..n - 4].copy_from_slice(&meta_len.to_le_bytes());
    assert_corrupt(read(file.into()), "bad footer");
}

#[test]
fn a_known_size_spares_the_head_a_store_without_suffix_reads_needs() {
    let file = with_pairs(&[("org.apache.hudi.bloomfilter", 430_000)]);
    let storage = MemoryStorage::new().without_suffix_ranges();
    storage.insert(PATH, file.clone(), None);
    let counted = crate::storage::Instrumented::new(Arc::new(storage));
    let stats = counted.stats();
    let read =
        |size| futures::executor::block_on(read_footer_and_data(&counted, PATH, size, 0, None));
    let unsized_footer = read(None).unwrap();
    let unsized_io = stats.snapshot();
    assert_eq!(
        (unsized_io.heads, unsized_io.requests),
        (1, 3),
        "head, tail, footer head"
    );
    let sized_footer = read(Some(file.len() as u64)).unwrap();
    let sized_io = stats.snapshot().since(&unsized_io);
    assert_eq!(
        (sized_io.heads, sized_io.requests),
        (0, 2),
        "tail, footer head"
    );
    assert_eq!(sized_footer.parquet().file_metadata().num_rows(), 1);
    assert_eq!(
        sized_footer.parquet().num_row_groups(),
        unsized_footer.parquet().num_row_groups()
    );
}

#[test]
fn a_small_files_data_comes_with_its_footer_head() {
    let file = with_pairs(&[("org.apache.hudi.bloomfilter", 430_000)]);
    let storage = MemoryStorage::new();
    storage.insert(PATH, file.clone(), None);
    let counted = crate::storage::Instrumented::new(Arc::new(storage));
    let stats = counted.stats();
    let storage: Arc<dyn Storage> = Arc::new(counted);
    let footer = futures::executor::block_on(read_footer_and_data(
        storage.as_ref(),
        PATH,
        None,
        1 << 20,
        None,
    ))
    .unwrap();
    let groups = matching_row_groups(&footer, None);
    let stream = stream_row_groups(storage.clone(), PATH, footer.clone(), groups, None, 1024);
    let batches = futures::executor::block_on(stream.unwrap().try_collect::<Vec<_>>()).unwrap();
    assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 1);
    let io = stats.snapshot();
    assert_eq!(
        io.requests, 2,
        "the tail, then the data with the footer's head"
    );
    assert!(
        io.bytes < 20_000,
        "{} bytes of a {} byte file",
        io.bytes,
        file.len()
    );
    // The session keeps the footer alone; a limit below the data reads the footer alone.
    assert!(footer.without_data().data.is_empty() && !footer.data.is_empty());
    let footer = futures::executor::block_on(read_footer_and_data(
        storage.as_ref(),
        PATH,
        None,
        100,
        None,
    ));
    assert!(footer.unwrap().data.is_empty());
}

/// Reads `file`'s footer (of a `size` the plan knows) with `hint`, then its rows; answers
/// the row count, the requests and round trips it all cost, and the bytes.
fn read_with_hint(file: &Bytes, hint: Option<u64>, every_column: bool) -> (usize, u64, u64, u64) {
    let storage = MemoryStorage::new();
    storage.insert(PATH, file.clone(), None);
    let in_flight_together = crate::hfile::test_support::Yielding(Arc::new(storage));
    let counted = crate::storage::Instrumented::new(Arc::new(in_flight_together));
    let stats = counted.stats();
    let storage: Arc<dyn Storage> = Arc::new(counted);
    let (size, limit) = (Some(file.len() as u64), data_with_footer(every_column));
    let read = read_footer_and_data(storage.as_ref(), PATH, size, limit, hint);
    let footer = futures::executor::block_on(read).unwrap();
    let groups = matching_row_groups(&footer, None);
    let columns = ["id".to_string()];
    let columns = (!every_column).then_some(&columns[..]);
    let stream = stream_row_groups(storage.clone(), PATH, footer, groups, columns, 1024);
    let batches = futures::executor::block_on(stream.unwrap().try_collect::<Vec<_>>()).unwrap();
    let io = stats.snapshot();
    let rows = batches.iter().map(|b| b.num_rows()).sum();
    (rows, io.requests, io.round_trips, io.bytes)
}

#[test]
fn a_sibling_footer_length_fetches_the_head_and_data_beside_the_tail() {
    let file = with_pairs(&[("org.apache.hudi.bloomfilter", 430_000)]);
    let footer_len = footer_and_cost(file.clone()).0.footer_len;
    let (rows, requests, round_trips, bytes) = read_with_hint(&file, None, true);
    assert_eq!(
        (rows, requests, round_trips),
        (1, 2, 2),
        "tail, then data and head"
    );
    // A sibling of a footer a little longer or shorter: the tail, and beside it the data
    // with the footer's head.
    for hint in [footer_len, footer_len + 300, footer_len - 300] {
        let (rows, requests, round_trips, hinted_bytes) = read_with_hint(&file, Some(hint), true);
        assert_eq!((rows, requests, round_trips), (1, 2, 1), "hint {hint}");
        assert!(
            hinted_bytes <= bytes + 2_500,
            "hint {hint}: {hinted_bytes} bytes"
        );
    }
    // A projection: the footer's head beside the tail, then its column chunks.
    let (_, _, no_hint, _) = read_with_hint(&file, None, false);
    let (rows, _, round_trips, bytes) = read_with_hint(&file, Some(footer_len), false);
    assert_eq!((rows, no_hint, round_trips), (1, 3, 2));
    assert!(bytes < 30_000, "{bytes} bytes");
}

#[test]
fn a_wrong_footer_length_costs_at_most_the_round_trip_it_meant_to_save() {
    let long = with_pairs(&[("org.apache.hudi.bloomfilter", 430_000)]);
    let short = with_pairs(&[("org.apache.hudi.bloomfilter", 30)]);
    let (long_len, short_len) = (
        footer_and_cost(long.clone()).0.footer_len,
        footer_and_cost(short.clone()).0.footer_len,
    );
    let cases = [
        (&long, long_len / 2, true),
        (&long, long_len * 3 / 2, true),
        (&long, long_len + 100_000, false),
        (&long, long_len / 2, false),
        (&short, long_len, true),
        (&short, FOOTER_PREFETCH + 1_000, true),
        (&short, FOOTER_PREFETCH + 1_000, false),
        (&short, long_len, false),
        (&short, u32::MAX as u64, true),
    ];
    for (file, hint, every_column) in cases {
        let (rows, _, round_trips, bytes) = read_with_hint(file, Some(hint), every_column);
        let (_, _, unhinted_round_trips, unhinted) = read_with_hint(file, None, every_column);
        let case = format!("hint {hint}, every column {every_column}");
        assert_eq!(rows, 1, "{case}");
        assert!(
            round_trips <= unhinted_round_trips,
            "{case}: {round_trips} round trips"
        );
        // At most the window the hint fetched in vain, and the footer it was short of.
        let actual = footer_and_cost((*file).clone()).0.footer_len;
        let bound = unhinted + 10 * 1024 + actual.saturating_sub(hint);
        assert!(bytes <= bound, "{case}: {bytes} > {bound} bytes");
    }
    // A sibling whose footer the tail read holds (no bloom filter, as hudi-rs writes): a
    // small file whose every column is read comes whole in one request, footer and data,
    // where the tail read would leave the data to a second round trip; a projection keeps
    // the tail read.
    for file in [&short, &long] {
        let (rows, requests, round_trips, bytes) = read_with_hint(file, Some(short_len), true);
        assert_eq!((rows, requests, round_trips), (1, 1, 1));
        assert_eq!(bytes, file.len() as u64);
        let projection = read_with_hint(file, Some(short_len), false);
        assert_eq!(projection, read_with_hint(file, None, false));
    }
}

/// A footer far shorter than the hint (a file without a bloom filter among files with one):
/// the data the hinted read fetched is kept and the rest fetched once, not all of it again.
#[test]
fn a_hint_longer_than_the_footer_fetches_no_data_twice() {
    let n = 20_000i64;
    let column = |k: i64| {
        Arc::new(arrow_array::Int64Array::from_iter_values(
            (0..n).map(|i| i * k),
        )) as ArrayRef
    };
    let batch = RecordBatch::try_from_iter([
        ("id", column(1)),
        ("a", column(3)),
        ("b", column(7)),
        ("c", column(11)),
    ])
    .unwrap();
    let props = parquet::file::properties::WriterProperties::builder()
        .set_dictionary_enabled(false)
        .build();
    let file = parquet_of(&batch, props);
    assert!(file.len() > 400_000, "{} bytes", file.len());
    let footer_len = footer_and_cost(file.clone()).0.footer_len;
    assert!(footer_len + 8 <= FOOTER_PREFETCH);
    let (rows, _, unhinted_round_trips, unhinted) = read_with_hint(&file, None, true);
    let (hinted_rows, _, round_trips, bytes) = read_with_hint(&file, Some(200_000), true);
    assert_eq!((rows, hinted_rows), (n as usize, n as usize));
    assert!(
        round_trips <= unhinted_round_trips,
        "{round_trips} round trips"
    );
    assert!(
        bytes <= unhinted + FOOTER_PREFETCH,
        "{bytes} > {unhinted} bytes"
    );
}

/// A finished reader is dropped with the batch that completes its declared rows, before the
/// stream is polled again; rows beyond the declared count are an error, not dropped.
#[test]
fn a_reader_is_dropped_with_its_last_batch() {
    use std::sync::atomic::{AtomicBool, Ordering};
    struct Dropped(Arc<AtomicBool>);
    impl Drop for Dropped {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }
    let batch = |n: i64| {
        let ids = arrow_array::Int64Array::from_iter_values(0..n);
        RecordBatch::try_from_iter([("id", Arc::new(ids) as ArrayRef)]).unwrap()
    };
    let dropped = Arc::new(AtomicBool::new(false));
    let guard = Dropped(dropped.clone());
    let inner = futures::stream::iter([Ok(batch(3)), Ok(batch(2))])
        .chain(futures::stream::poll_fn(move |_| {
            let _ = &guard;
            std::task::Poll::Ready(None)
        }))
        .boxed();
    let mut stream = dropped_after(inner, 5);
    futures::executor::block_on(async {
        assert_eq!(stream.next().await.unwrap().unwrap().num_rows(), 3);
        assert!(!dropped.load(Ordering::SeqCst));
        assert_eq!(stream.next().await.unwrap().unwrap().num_rows(), 2);
        assert!(
            dropped.load(Ordering::SeqCst),
            "dropped with its last batch"
        );
        assert!(stream.next().await.is_none());
    });
    let items = |inner: Vec<parquet::errors::Result<RecordBatch>>| {
        let stream = dropped_after(futures::stream::iter(inner).boxed(), 5);
        futures::executor::block_on(stream.collect::<Vec<_>>())
    };
    // More rows than declared: the declared ones, then an error.
    let more = items(vec![Ok(batch(5)), Ok(batch(1))]);
    assert_eq!(more.len(), 2);
    assert_eq!(more[0].as_ref().unwrap().num_rows(), 5);
    let e = more[1].as_ref().unwrap_err().to_string();
    assert!(e.contains("more than the 5 rows"), "{e}");
    // An error ends the stream, also one found after the declared rows.
    let failing = items(vec![
        Err(ParquetError::General("bad page".into())),
        Ok(batch(1)),
    ]);
    assert_eq!(failing.len(), 1);
    assert!(failing[0].is_err());
    let late = items(vec![
        Ok(batch(5)),
        Err(ParquetError::General("bad page".into())),
    ]);
    assert_eq!(late.len(), 2);
    assert!(late[1].is_err());
    // Fewer rows than declared: every one the reader yields.
    let fewer = items(vec![Ok(batch(2))]);
    assert_eq!(fewer.len(), 1);
}

/// Fuzz findings in the crate's page decoding, each a panic (an abort in wasm) before the
/// levels were walked: a bit-packed run of definition levels longer than its bytes (also in a
/// page whose header lacks its type), and a dictionary page of no values holding bytes (a
/// division by zero). Both read paths refuse them as `CORRUPT`.
#[test]
fn damaged_levels_and_dictionaries_are_corrupt_not_panics() {
    let cases: [(&[u8], &str); 3] = [
        (
            include_bytes!(
                "../../tests/fuzz/regressions/input_parquet/definition-run-past-its-levels.parquet"
            ),
            "column day: page 1: definition levels: a run at byte 2 runs past them",
        ),
        (
            include_bytes!(
                "../../tests/fuzz/regressions/input_parquet/empty-dictionary-with-bytes.parquet"
            ),
            "column tags.list.element: page 0: a dictionary of no values, yet 10 bytes",
        ),
        (
            // A data page header without its type, which the crate reads as a v1 data page.
            include_bytes!(
                "../../tests/fuzz/regressions/input_parquet/page-header-without-its-type.parquet"
            ),
            "column at: page 1: definition levels: a run at byte 2 runs past them",
        ),
    ];
    for (file, needle) in cases {
        let file = Bytes::from_static(file);
        assert_corrupt(read(file.clone()), needle);
        assert_corrupt(decode_parquet_block(file, PATH).map(drop), needle);
    }
}

/// Every codec and both page versions pass the page checks: nullable, required and nested
/// columns over many small pages read as the crate reads them (gzip and zstd pages have only
/// their levels inflated by the checks; snappy and lz4 pages are decompressed whole).
#[test]
fn pages_of_every_codec_and_version_pass_the_checks() {
    use arrow_array::builder::{ListBuilder, StringBuilder};
    use arrow_array::{Int64Array, StringArray};
    use parquet::basic::{Compression, GzipLevel, ZstdLevel};
    use parquet::file::properties::{WriterProperties, WriterVersion};
    let rows = 2_000;
    let id = Int64Array::from_iter_values(0..rows);
    let note = StringArray::from_iter((0..rows).map(|i| (i % 7 != 0).then(|| format!("n{i}"))));
    let mut tags = ListBuilder::new(StringBuilder::new());
    for i in 0..rows {
        for j in 0..i % 3 {
            tags.values().append_value(format!("t{j}"));
        }
        tags.append(i % 5 != 0);
    }
    let batch = RecordBatch::try_from_iter_with_nullable([
        ("id", Arc::new(id) as ArrayRef, false),
        ("note", Arc::new(note) as ArrayRef, true),
        ("tags", Arc::new(tags.finish()) as ArrayRef, true),
    ])
    .unwrap();
    let codecs = [
        Compression::UNCOMPRESSED,
        Compression::GZIP(GzipLevel::default()),
        Compression::ZSTD(ZstdLevel::default()),
        Compression::SNAPPY,
        Compression::LZ4_RAW,
    ];
    for codec in codecs {
        for version in [WriterVersion::PARQUET_1_0, WriterVersion::PARQUET_2_0] {
            let props = WriterProperties::builder()
                .set_compression(codec)
                .set_writer_version(version)
                .set_data_page_row_count_limit(100)
                .set_write_batch_size(100)
                .build();
            let file = parquet_of(&batch, props);
            let expected = one(&crate_batches(file.clone()));
            assert_eq!(expected.num_rows(), rows as usize);
            assert_eq!(one(&our_batches(file.clone(), None)), expected, "{codec:?}");
            let block = decode_parquet_block(file, PATH).unwrap();
            assert_eq!(one(&block), expected, "{codec:?} {version:?}");
        }
    }
}
