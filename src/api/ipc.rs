//! Arrow IPC bytes checked before arrow-ipc reads them. Its reader slices each buffer where
//! the message says without checking that the body holds it, views typed buffers whose
//! length is not whole values (both panic, which kills a wasm module), and allocates what a
//! compressed buffer claims to expand to. Both formats: the stream's messages in order, the
//! file's by its footer's blocks.

use arrow_ipc::convert::try_fb_to_schema;
use arrow_ipc::{root_as_footer, root_as_message, MessageHeader};
use arrow_schema::{DataType, Schema};

/// Compressed buffers may claim at most this many times the input, plus [`DECODED_SLACK`].
const MOST_EXPANSION: u64 = 64;
const DECODED_SLACK: u64 = 64 << 20;

type Check = std::result::Result<(), String>;

/// What the messages are checked against: the budget of decoded bytes, and the element
/// width of each record-batch buffer in order (`None`: a bitmap or bytes of any length),
/// once the schema is known and holds no layout this check does not follow.
struct State {
    budget: u64,
    widths: Option<Vec<Option<usize>>>,
}

pub fn check_bounds(bytes: &[u8]) -> Check {
    let mut state = State {
        budget: (bytes.len() as u64)
            .saturating_mul(MOST_EXPANSION)
            .saturating_add(DECODED_SLACK),
        widths: None,
    };
    if bytes.starts_with(b"ARROW1") {
        return check_file(bytes, &mut state);
    }
    let mut at = 0usize;
    while at < bytes.len() {
        match message_at(bytes, at, None, &mut state)? {
            Some(next) => at = next,
            None => return Ok(()),
        }
    }
    Ok(())
}

fn check_file(bytes: &[u8], state: &mut State) -> Check {
    let n = bytes.len();
    if n < 16 || !bytes.ends_with(b"ARROW1") {
        return Err("an Arrow IPC file too short for its footer".into());
    }
    let footer_len = i32::from_le_bytes(bytes[n - 10..n - 6].try_into().unwrap_or_default());
    let footer_start = usize::try_from(footer_len)
        .ok()
        .and_then(|len| (n - 10).checked_sub(len))
        .filter(|&s| s >= 8)
        .ok_or_else(|| format!("Arrow IPC footer length {footer_len} does not fit the file"))?;
    let footer = root_as_footer(&bytes[footer_start..n - 10])
        .map_err(|e| format!("bad Arrow IPC footer: {e}"))?;
    let schema = footer
        .schema()
        .ok_or("an Arrow IPC file without a schema")?;
    state.widths = widths_of(&try_fb_to_schema(schema).map_err(|e| e.to_string())?)?;
    let blocks = footer
        .recordBatches()
        .into_iter()
        .flatten()
        .chain(footer.dictionaries().into_iter().flatten());
    for block in blocks {
        let offset = usize::try_from(block.offset())
            .ok()
            .filter(|&o| o < footer_start)
            .ok_or_else(|| format!("Arrow IPC block at {} outside the file", block.offset()))?;
        let meta = usize::try_from(block.metaDataLength()).ok();
        let body = u64::try_from(block.bodyLength()).ok();
        let (Some(meta), Some(body)) = (meta, body) else {
            return Err("an Arrow IPC block with a negative length".into());
        };
        let end = (offset as u64)
            .checked_add(meta as u64)
            .and_then(|e| e.checked_add(body));
        if end.is_none_or(|e| e > footer_start as u64) {
            return Err(format!("Arrow IPC block at {offset} runs past the data"));
        }
        message_at(bytes, offset, Some((meta, body)), state)?;
    }
    Ok(())
}

/// Checks the message at `at` (its length prefix, metadata and body) and answers where the
/// next one starts; `None` at the end-of-stream marker.
fn message_at(
    bytes: &[u8],
    at: usize,
    block: Option<(usize, u64)>,
    state: &mut State,
) -> std::result::Result<Option<usize>, String> {
    let word = |i: usize| -> std::result::Result<u32, String> {
        bytes
            .get(i..i + 4)
            .map(|b| u32::from_le_bytes(b.try_into().unwrap_or_default()))
            .ok_or_else(|| format!("Arrow IPC message at {at} is cut short"))
    };
    let (mut start, mut len) = (at + 4, word(at)?);
    if len == u32::MAX {
        // The continuation marker, then the length.
        len = word(at + 4)?;
        start += 4;
    }
    // A file's block says where its body starts (and the reader trusts it over the prefix).
    let (meta_end, block_body) = match block {
        Some((meta, body)) => (at.saturating_add(meta), Some(body)),
        None if len == 0 => return Ok(None),
        None => (start.saturating_add(len as usize), None),
    };
    if meta_end > bytes.len() || meta_end <= start {
        return Err(format!("Arrow IPC message at {at} runs past the input"));
    }
    let message = root_as_message(&bytes[start..meta_end])
        .map_err(|e| format!("bad Arrow IPC message at {at}: {e}"))?;
    let body = u64::try_from(message.bodyLength())
        .map_err(|_| format!("Arrow IPC message at {at} has a negative body length"))?;
    if block_body.is_some_and(|b| b < body) {
        return Err(format!(
            "Arrow IPC message at {at} is longer than its block"
        ));
    }
    let body_end = (meta_end as u64)
        .checked_add(body)
        .filter(|&e| e <= bytes.len() as u64)
        .ok_or_else(|| format!("Arrow IPC message at {at}: its body runs past the input"))?;
    if let Some(schema) = message.header_as_schema() {
        state.widths = widths_of(&try_fb_to_schema(schema).map_err(|e| e.to_string())?)?;
    }
    let (batch, widths) = match message.header_type() {
        MessageHeader::RecordBatch => (message.header_as_record_batch(), state.widths.as_ref()),
        // A dictionary's values have their own layout: only their bounds are checked.
        MessageHeader::DictionaryBatch => (
            message.header_as_dictionary_batch().and_then(|d| d.data()),
            None,
        ),
        _ => (None, None),
    };
    let Some(batch) = batch else {
        return Ok(Some(body_end as usize));
    };
    // Rows cost at least a bit each in any column a table has (a key column, offsets, more):
    // a count far past the bytes is a lie that would size allocations (null columns take
    // their length on trust).
    let most_rows = (bytes.len() as u64).saturating_mul(8).saturating_add(64);
    let nodes = batch.nodes().into_iter().flatten().map(|n| n.length());
    if let Some(rows) = std::iter::once(batch.length())
        .chain(nodes)
        .find(|&n| u64::try_from(n).map_or(true, |n| n > most_rows))
    {
        return Err(format!(
            "Arrow IPC message at {at} claims {rows} rows in {} bytes",
            bytes.len()
        ));
    }
    let compressed = batch.compression().is_some();
    for (i, buffer) in batch.buffers().into_iter().flatten().enumerate() {
        let (offset, length) = (buffer.offset(), buffer.length());
        let end = u64::try_from(offset)
            .ok()
            .zip(u64::try_from(length).ok())
            .and_then(|(o, l)| o.checked_add(l));
        // The format aligns every buffer to 8 bytes.
        if end.is_none_or(|e| e > body) || offset % 8 != 0 {
            return Err(format!(
                "Arrow IPC message at {at}: a buffer at {offset} of {length} bytes is outside \
                 its {body}-byte body or not aligned to 8 bytes"
            ));
        }
        let width = widths.and_then(|w| w.get(i).copied().flatten());
        if let Some(width) =
            width.filter(|&w| !compressed && !(length as u64).is_multiple_of(w as u64))
        {
            return Err(format!(
                "Arrow IPC message at {at}: buffer {i} of {length} bytes is not whole \
                 {width}-byte values"
            ));
        }
        if compressed && (1..8).contains(&length) {
            return Err(format!(
                "Arrow IPC message at {at}: a compressed buffer of {length} bytes has no \
                 length prefix"
            ));
        }
        if compressed && length >= 8 {
            // The first 8 bytes say how long the buffer is uncompressed (-1: stored as is).
            let from = meta_end + offset as usize;
            let claimed = i64::from_le_bytes(bytes[from..from + 8].try_into().unwrap_or_default());
            if claimed > 0 {
                state.budget = state.budget.checked_sub(claimed as u64).ok_or_else(|| {
                    format!(
                        "Arrow IPC message at {at}: its compressed buffers claim more than \
                         {MOST_EXPANSION} times the input"
                    )
                })?;
            }
        }
    }
    Ok(Some(body_end as usize))
}

/// Column types no table has, whose decoding in arrow-ipc trusts the message's lengths.
fn refused_type(t: &DataType) -> Option<&DataType> {
    use DataType::*;
    match t {
        Union(_, _) | RunEndEncoded(_, _) | ListView(_) | LargeListView(_) => Some(t),
        Struct(fields) => fields.iter().find_map(|f| refused_type(f.data_type())),
        List(f) | LargeList(f) | FixedSizeList(f, _) | Map(f, _) => refused_type(f.data_type()),
        Dictionary(_, value) => refused_type(value),
        _ => None,
    }
}

/// The schema's check plan (see [`buffer_widths`]), or why its columns are not taken.
fn widths_of(schema: &Schema) -> std::result::Result<Option<Vec<Option<usize>>>, String> {
    if let Some((field, t)) = schema
        .fields()
        .iter()
        .find_map(|f| refused_type(f.data_type()).map(|t| (f.name(), t)))
    {
        return Err(format!(
            "column {field:?} holds {t} values, which no Hudi table column takes"
        ));
    }
    Ok(buffer_widths(schema))
}

/// Each record-batch buffer's element width in IPC order (per field, depth first: validity,
/// then the type's own buffers); `None` where the schema holds string or binary views (whose
/// variadic buffers arrow-ipc counts itself) or a type [`refused_type`] refuses.
fn buffer_widths(schema: &Schema) -> Option<Vec<Option<usize>>> {
    fn push(t: &DataType, out: &mut Vec<Option<usize>>) -> Option<()> {
        use DataType::*;
        match t {
            Null => {}
            Struct(fields) => {
                out.push(None);
                for f in fields {
                    push(f.data_type(), out)?;
                }
            }
            List(f) | Map(f, _) => {
                out.extend([None, Some(4)]);
                push(f.data_type(), out)?;
            }
            LargeList(f) => {
                out.extend([None, Some(8)]);
                push(f.data_type(), out)?;
            }
            FixedSizeList(f, _) => {
                out.push(None);
                push(f.data_type(), out)?;
            }
            Utf8 | Binary => out.extend([None, Some(4), None]),
            LargeUtf8 | LargeBinary => out.extend([None, Some(8), None]),
            Boolean => out.extend([None, None]),
            Dictionary(key, _) => out.extend([None, key.primitive_width()]),
            FixedSizeBinary(w) => out.extend([None, usize::try_from(*w).ok()]),
            // Variadic buffers: not followed here (arrow-ipc counts them itself).
            Utf8View | BinaryView => return None,
            Union(_, _) | RunEndEncoded(_, _) | ListView(_) | LargeListView(_) => return None,
            other => out.extend([None, Some(other.primitive_width()?)]),
        }
        Some(())
    }
    let mut out = Vec::new();
    for f in schema.fields() {
        push(f.data_type(), &mut out)?;
    }
    Some(out)
}
