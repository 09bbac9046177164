//! Bounds on what one write takes in, checked before anything is decoded or written: rows
//! come from the least trusted place (a body POSTed to an edge worker), and an isolate that
//! runs out of memory or stack dies for every request it serves.

use std::collections::BTreeMap;

use arrow_array::{Array, RecordBatch};

use crate::error::{HudiError, Result};

/// Longest row (a JSON line, a CSV line, or a row's values in Arrow / Parquet input).
pub const MAX_ROW_BYTES: &str = "hudi-edge.write.max.row.bytes";
/// Largest input, as handed over (file, body or Arrow IPC bytes).
pub const MAX_INPUT_BYTES: &str = "hudi-edge.write.max.input.bytes";
/// Largest input the JS package takes as plain objects, counted as the Arrow they become
/// (the package checks it while converting: the conversion holds some 6 times that in JS
/// beside the engine's own memory). Parsed here so a bad value is refused like the others.
pub const MAX_OBJECTS_BYTES: &str = "hudi-edge.write.max.objects.bytes";

/// 2 MiB: a write holds a row's largest values some 20 times over (decoded, aligned, encoded
/// into a file, then as column statistics in the metadata table), so that is what a 128 MB
/// isolate can take as one row.
const DEFAULT_MAX_ROW_BYTES: u64 = 2 << 20;
/// In wasm, what keeps a write within 64 MB + 3 times its input, inside a 128 MB isolate (its
/// linear memory peaks near 80 MB for 16 MiB of Arrow input,
/// tests/bench/results/write_memory_wasm.md); natively far more.
#[cfg(target_arch = "wasm32")]
const DEFAULT_MAX_INPUT_BYTES: u64 = 16 << 20;
#[cfg(not(target_arch = "wasm32"))]
const DEFAULT_MAX_INPUT_BYTES: u64 = 4 << 30;

/// JSON nesting past which a value cannot fit any table column: the decoder would recurse
/// that deep describing the mistake.
const JSON_DEPTH_OVER_SCHEMA: usize = 2;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InputLimits {
    pub max_row_bytes: u64,
    pub max_input_bytes: u64,
}

impl Default for InputLimits {
    fn default() -> Self {
        InputLimits {
            max_row_bytes: DEFAULT_MAX_ROW_BYTES,
            max_input_bytes: DEFAULT_MAX_INPUT_BYTES,
        }
    }
}

impl InputLimits {
    /// From a write's options; a value that is not a positive whole number of bytes is
    /// `INVALID_ARGUMENT`.
    pub fn of(options: &BTreeMap<String, String>) -> Result<InputLimits> {
        let bytes = |key: &str, default: u64| match options.get(key) {
            None => Ok(default),
            Some(v) => v
                .trim()
                .parse::<u64>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| {
                    HudiError::invalid(format!(
                        "{key}={v:?}: expected a whole number of bytes, at least 1"
                    ))
                }),
        };
        bytes(MAX_OBJECTS_BYTES, 1)?;
        Ok(InputLimits {
            max_row_bytes: bytes(MAX_ROW_BYTES, DEFAULT_MAX_ROW_BYTES)?,
            max_input_bytes: bytes(MAX_INPUT_BYTES, DEFAULT_MAX_INPUT_BYTES)?,
        })
    }

    /// The whole input's size, before it is read further.
    pub fn check_input(&self, len: u64, source: &str) -> Result<()> {
        if len > self.max_input_bytes {
            return Err(HudiError::invalid_input(format!(
                "{source}: the input is {}; the limit is {} (set {MAX_INPUT_BYTES}, or write \
                 it in several commits)",
                size(len),
                size(self.max_input_bytes)
            )));
        }
        Ok(())
    }

    fn row_too_big(&self, source: &str, row: usize, len: u64) -> HudiError {
        HudiError::invalid_input(format!(
            "{source}: row {row} is {}; the limit is {} (set {MAX_ROW_BYTES})",
            size(len),
            size(self.max_row_bytes)
        ))
    }

    /// Every line of JSON lines or CSV text (the header too), and JSON nesting deeper than
    /// `max_depth`, in one pass over the bytes before any decoding. Answers the number of
    /// lines (so the decoder can make one batch of them).
    pub fn check_lines(
        &self,
        text: &[u8],
        max_depth: Option<usize>,
        source: &str,
    ) -> Result<usize> {
        let mut scan = JsonScan::default();
        let (mut row, mut start) = (0usize, 0usize);
        for (at, &b) in text.iter().enumerate() {
            if b == b'\n' {
                if (at - start) as u64 > self.max_row_bytes {
                    return Err(self.row_too_big(source, row, (at - start) as u64));
                }
                row += 1;
                start = at + 1;
                scan = JsonScan::default();
                continue;
            }
            if let Some(most) = max_depth {
                if scan.step(b) > most {
                    return Err(HudiError::invalid_input(format!(
                        "{source}: row {row} nests values more than {most} deep; no column of \
                         the table's schema holds that"
                    )));
                }
            }
        }
        let last = (text.len() - start) as u64;
        if last > self.max_row_bytes {
            return Err(self.row_too_big(source, row, last));
        }
        Ok(row + 1)
    }

    /// Each row's values (strings and binary by length, other values by width) in decoded
    /// batches: Parquet and Arrow input, whose rows have no text to measure.
    pub fn check_batches(&self, batches: &[RecordBatch], source: &str) -> Result<()> {
        let mut first_row = 0usize;
        for batch in batches {
            let mut sizes = vec![0u64; batch.num_rows()];
            for column in batch.columns() {
                add_value_sizes(column.as_ref(), &mut sizes);
            }
            if let Some((row, &len)) = sizes
                .iter()
                .enumerate()
                .find(|(_, &len)| len > self.max_row_bytes)
            {
                return Err(self.row_too_big(source, first_row + row, len));
            }
            first_row += batch.num_rows();
        }
        Ok(())
    }
}

/// Nesting depth a JSON row may reach for `schema`: the row object, each struct, list and
/// map level, and a little slack.
pub fn json_depth_bound(schema: &arrow_schema::Schema) -> usize {
    fn depth(t: &arrow_schema::DataType) -> usize {
        use arrow_schema::DataType::*;
        match t {
            Struct(fields) => {
                1 + fields
                    .iter()
                    .map(|f| depth(f.data_type()))
                    .max()
                    .unwrap_or(0)
            }
            List(f) | LargeList(f) | FixedSizeList(f, _) | ListView(f) | LargeListView(f) => {
                1 + depth(f.data_type())
            }
            // An object of entries; each entry's value nests below it.
            Map(entries, _) => match entries.data_type() {
                Struct(kv) => 1 + kv.iter().map(|f| depth(f.data_type())).max().unwrap_or(0),
                _ => 1,
            },
            _ => 0,
        }
    }
    1 + schema
        .fields()
        .iter()
        .map(|f| depth(f.data_type()))
        .max()
        .unwrap_or(0)
        + JSON_DEPTH_OVER_SCHEMA
}

/// Bracket depth outside JSON strings, one byte at a time.
#[derive(Default)]
struct JsonScan {
    depth: usize,
    in_string: bool,
    escaped: bool,
}

impl JsonScan {
    fn step(&mut self, b: u8) -> usize {
        if self.in_string {
            match (self.escaped, b) {
                (true, _) => self.escaped = false,
                (false, b'\\') => self.escaped = true,
                (false, b'"') => self.in_string = false,
                _ => {}
            }
        } else {
            match b {
                b'"' => self.in_string = true,
                b'[' | b'{' => self.depth += 1,
                b']' | b'}' => self.depth = self.depth.saturating_sub(1),
                _ => {}
            }
        }
        self.depth
    }
}

fn add_value_sizes(column: &dyn Array, sizes: &mut [u64]) {
    for (size, value) in sizes.iter_mut().zip(value_sizes(column)) {
        *size += value;
    }
}

/// Each value's bytes: strings and binary by length, nested values by what they hold,
/// others by their width.
fn value_sizes(column: &dyn Array) -> Vec<u64> {
    use arrow_array::cast::AsArray;
    use arrow_schema::DataType::*;
    let n = column.len();
    match column.data_type() {
        Utf8 => lengths(column.as_string::<i32>().offsets()),
        LargeUtf8 => lengths(column.as_string::<i64>().offsets()),
        Binary => lengths(column.as_binary::<i32>().offsets()),
        LargeBinary => lengths(column.as_binary::<i64>().offsets()),
        Struct(_) => {
            let mut sizes = vec![0u64; n];
            for child in column.as_struct().columns() {
                add_value_sizes(child.as_ref(), &mut sizes);
            }
            sizes
        }
        List(_) => {
            let list = column.as_list::<i32>();
            ranges(list.offsets(), &value_sizes(list.values().as_ref()))
        }
        LargeList(_) => {
            let list = column.as_list::<i64>();
            ranges(list.offsets(), &value_sizes(list.values().as_ref()))
        }
        Map(_, _) => {
            let map = column.as_map();
            let entries: &dyn Array = map.entries();
            ranges(map.offsets(), &value_sizes(entries))
        }
        FixedSizeList(_, width) => {
            let list = column.as_fixed_size_list();
            let inner = value_sizes(list.values().as_ref());
            let width = (*width).max(0) as usize;
            (0..n)
                .map(|row| inner.iter().skip(row * width).take(width).sum())
                .collect()
        }
        Utf8View => column
            .as_string_view()
            .iter()
            .map(|v| v.map_or(0, |s| s.len() as u64))
            .collect(),
        BinaryView => column
            .as_binary_view()
            .iter()
            .map(|v| v.map_or(0, |b| b.len() as u64))
            .collect(),
        Dictionary(_, _) => {
            let dictionary = column.as_any_dictionary();
            let values = value_sizes(dictionary.values().as_ref());
            dictionary
                .normalized_keys()
                .iter()
                .map(|&k| values.get(k).copied().unwrap_or(0))
                .collect()
        }
        other => vec![other.primitive_width().unwrap_or(8) as u64; n],
    }
}

fn lengths<O: arrow_array::OffsetSizeTrait>(offsets: &[O]) -> Vec<u64> {
    offsets
        .windows(2)
        .map(|w| (w[1] - w[0]).as_usize() as u64)
        .collect()
}

/// Per row, the sizes of its child values `offsets[row]..offsets[row + 1]`.
fn ranges<O: arrow_array::OffsetSizeTrait>(offsets: &[O], inner: &[u64]) -> Vec<u64> {
    let mut prefix = Vec::with_capacity(inner.len() + 1);
    prefix.push(0u64);
    for v in inner {
        prefix.push(prefix.last().copied().unwrap_or(0).saturating_add(*v));
    }
    let at = |o: O| prefix.get(o.as_usize()).copied().unwrap_or(0);
    offsets
        .windows(2)
        .map(|w| at(w[1]).saturating_sub(at(w[0])))
        .collect()
}

/// Bytes as people read them: `200 MB`, `16 MiB`.
fn size(n: u64) -> String {
    match n {
        n if n >= 1 << 20 && n % (1 << 20) == 0 => format!("{} MiB", n >> 20),
        n if n >= 1_000_000 => format!("{:.1} MB", n as f64 / 1e6),
        n => format!("{n} bytes"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(row: u64) -> InputLimits {
        InputLimits {
            max_row_bytes: row,
            max_input_bytes: 1 << 30,
        }
    }

    #[test]
    fn long_lines_are_refused_naming_the_row() {
        let text = b"{\"a\":1}\n{\"a\":\"0123456789\"}\n";
        assert!(limits(20).check_lines(text, None, "in").is_ok());
        let e = limits(10).check_lines(text, None, "in").unwrap_err();
        assert_eq!(e.code(), "INVALID_INPUT");
        assert!(e.to_string().contains("row 1 is 18 bytes"), "{e}");
        assert!(e.to_string().contains(MAX_ROW_BYTES), "{e}");
    }

    #[test]
    fn deep_nesting_is_refused_and_brackets_in_strings_do_not_count() {
        let deep = format!("{{\"a\":{}{}}}", "[".repeat(100), "]".repeat(100));
        let e = limits(1 << 20)
            .check_lines(deep.as_bytes(), Some(5), "in")
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("row 0 nests values more than 5 deep"),
            "{e}"
        );
        let quoted = format!("{{\"a\":\"{}\\\"[\"}}", "[".repeat(100));
        assert!(limits(1 << 20)
            .check_lines(quoted.as_bytes(), Some(2), "in")
            .is_ok());
    }

    #[test]
    fn schema_depth_counts_structs_lists_and_maps() {
        use arrow_schema::{DataType, Field, Fields, Schema};
        use std::sync::Arc;
        let flat = Schema::new(vec![Field::new("a", DataType::Utf8, true)]);
        assert_eq!(json_depth_bound(&flat), 1 + JSON_DEPTH_OVER_SCHEMA);
        let inner = DataType::Struct(Fields::from(vec![Field::new("x", DataType::Int32, true)]));
        let nested = Schema::new(vec![Field::new(
            "l",
            DataType::List(Arc::new(Field::new("item", inner, true))),
            true,
        )]);
        assert_eq!(json_depth_bound(&nested), 3 + JSON_DEPTH_OVER_SCHEMA);
    }

    #[test]
    fn options_parse_and_refuse_nonsense() {
        let mut o = BTreeMap::new();
        o.insert(MAX_ROW_BYTES.to_string(), "1024".to_string());
        assert_eq!(InputLimits::of(&o).unwrap().max_row_bytes, 1024);
        o.insert(MAX_INPUT_BYTES.to_string(), "lots".to_string());
        assert_eq!(InputLimits::of(&o).unwrap_err().code(), "INVALID_ARGUMENT");
    }

    #[test]
    fn batch_rows_are_measured_by_their_values() {
        use arrow_array::{ArrayRef, Int64Array, StringArray};
        use std::sync::Arc;
        let big = "x".repeat(100);
        let batch = RecordBatch::try_from_iter([
            ("id", Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef),
            (
                "v",
                Arc::new(StringArray::from(vec!["a", big.as_str()])) as ArrayRef,
            ),
        ])
        .unwrap();
        assert!(limits(200)
            .check_batches(std::slice::from_ref(&batch), "in")
            .is_ok());
        let e = limits(50)
            .check_batches(&[batch.clone(), batch], "in")
            .unwrap_err();
        assert!(e.to_string().contains("row 1 is 108 bytes"), "{e}");
    }
}
