//! A walk over the Thrift compact encoding of footers and page headers before the `parquet`
//! crate decodes them. The crate skips unknown fields taking list and map elements of type
//! bool as zero bytes, so a few bytes declaring 2³¹ of them loop for seconds each. Parquet
//! structures hold no bool collections: they are refused, and every collection must fit
//! the bytes that remain.

/// Nesting deeper than the crate's own skip limit is refused too.
const MAX_DEPTH: u32 = 64;

const BOOL_TRUE: u8 = 1;
const BOOL_FALSE: u8 = 2;

/// Schema levels: the crate builds the schema tree recursively, one stack frame per level
/// (nested groups in a 9 KB footer overflowed a native thread's stack; in wasm, 100,000 of
/// them ran the stack out of bounds); Avro is held to the same depth.
const MAX_SCHEMA_DEPTH: usize = 64;

/// Checks that `footer` is one well-formed compact-protocol struct whose schema
/// (`FileMetaData` field 2) nests at most [`MAX_SCHEMA_DEPTH`] levels.
pub fn check_footer(footer: &[u8]) -> Result<(), String> {
    Walk::new(&[(0, footer)], footer.len()).value(12, MAX_DEPTH, false)?;
    check_schema_depth(footer)
}

/// The schema is a list of `SchemaElement`s in depth-first order, each with its
/// `num_children` (field 5): the levels still open are a stack of children left to come.
fn check_schema_depth(footer: &[u8]) -> Result<(), String> {
    let windows = [(0, footer)];
    let mut walk = Walk::new(&windows, footer.len());
    let mut id = 0;
    while let Some(ty) = walk.field(&mut id)? {
        if (id, ty) != (2, 9) {
            walk.value(ty, MAX_DEPTH, false)?;
            continue;
        }
        let (n, element) = walk.collection_header()?;
        let mut open: Vec<i64> = Vec::new();
        for _ in 0..n {
            if element != 12 {
                walk.value(element, MAX_DEPTH, true)?;
                continue;
            }
            let mut ints = Vec::new();
            walk.structure(MAX_DEPTH, Some(&mut ints), 0)?;
            while open.last() == Some(&0) {
                open.pop();
            }
            if let Some(left) = open.last_mut() {
                *left -= 1;
            }
            let children = ints
                .iter()
                .find(|(k, _)| *k == (0, 5))
                .map_or(0, |(_, v)| *v);
            if children > 0 {
                open.push(children);
            }
            if open.len() > MAX_SCHEMA_DEPTH {
                return Err(format!(
                    "schema nested deeper than {MAX_SCHEMA_DEPTH} levels"
                ));
            }
        }
    }
    Ok(())
}

/// `FileMetaData`'s field of key-value pairs (a list of `KeyValue` structs); the row groups
/// (field 4) come before it, `created_by` and the column orders after.
const KEY_VALUE_METADATA: i64 = 5;

/// What [`trim_footer`] answers.
#[derive(Debug)]
pub enum Trimmed {
    /// The footer re-encoded without the key-value pairs it could not hold.
    Footer(Vec<u8>),
    /// The walk needs the byte at this offset of the footer.
    Needs(usize),
}

/// A footer of `len` bytes, of which `windows` hold some, re-encoded without each key-value
/// pair whose value is at least `big` bytes long and not held: Hudi's bloom filter (hundreds
/// of KB between the row groups and the footer's last fields) need never be fetched.
pub fn trim_footer(windows: &[(usize, &[u8])], len: usize, big: u64) -> Result<Trimmed, String> {
    let mut walk = Walk::new(windows, len);
    match trimmed(&mut walk, big) {
        Ok(footer) => Ok(Trimmed::Footer(footer)),
        Err(e) => walk.missing.map(Trimmed::Needs).ok_or(e),
    }
}

fn trimmed(walk: &mut Walk, big: u64) -> Result<Vec<u8>, String> {
    let (mut out, mut copied, mut id) = (Vec::new(), 0, 0);
    while let Some(ty) = walk.field(&mut id)? {
        if (id, ty) != (KEY_VALUE_METADATA, 9) {
            walk.value(ty, MAX_DEPTH, false)?;
            continue;
        }
        walk.copy(copied, walk.pos, &mut out)?;
        let (n, element) = walk.collection_header()?;
        if element != 12 {
            return Err("key-value metadata is not a list of structs".into());
        }
        let mut kept = Vec::new();
        let mut count = 0u64;
        for _ in 0..n {
            let start = walk.pos;
            if !key_value_dropped(walk, big)? {
                walk.copy(start, walk.pos, &mut kept)?;
                count += 1;
            }
        }
        list_header(count, element, &mut out);
        out.extend(kept);
        copied = walk.pos;
    }
    walk.copy(copied, walk.pos, &mut out)?;
    Ok(out)
}

/// Walks one `KeyValue`: whether a binary field of at least `big` bytes is not held.
fn key_value_dropped(walk: &mut Walk, big: u64) -> Result<bool, String> {
    let (mut id, mut dropped) = (0, false);
    while let Some(ty) = walk.field(&mut id)? {
        if ty != 8 {
            walk.value(ty, MAX_DEPTH - 1, false)?;
            continue;
        }
        let n = walk.varint()?;
        let start = walk.pos;
        walk.skip(n)?;
        dropped |= n >= big && !walk.holds(start, walk.pos);
    }
    Ok(dropped)
}

fn list_header(n: u64, element: u8, out: &mut Vec<u8>) {
    if n < 15 {
        out.push(((n as u8) << 4) | element);
        return;
    }
    out.push(0xf0 | element);
    let mut n = n;
    while n >= 0x80 {
        out.push((n & 0x7f) as u8 | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

/// `FileMetaData`'s column orders: one `ColumnOrder` union per leaf column, whose members are
/// empty structs: 1 `TYPE_ORDER`, 2 `IEEE_754_TOTAL_ORDER`.
const COLUMN_ORDERS: i64 = 7;

/// Rewrites in place every column order `footer` declares `IEEE_754_TOTAL_ORDER` as
/// `TYPE_ORDER` (one byte each: field header `0x2C` becomes `0x1C`, so nothing moves);
/// answers how many. parquet-mr before 1.15 (Hudi 1.1's) takes the newer order as
/// undefined, drops those min/max, and Hudi then indexes such a column as [0.0, 0.0].
pub fn type_defined_float_orders(footer: &mut [u8]) -> Result<usize, String> {
    let mut patches = Vec::new();
    {
        let windows = [(0, &footer[..])];
        let mut walk = Walk::new(&windows, footer.len());
        let mut id = 0;
        while let Some(ty) = walk.field(&mut id)? {
            if (id, ty) != (COLUMN_ORDERS, 9) {
                walk.value(ty, MAX_DEPTH, false)?;
                continue;
            }
            let (n, element) = walk.collection_header()?;
            for _ in 0..n {
                if element != 12 {
                    walk.value(element, MAX_DEPTH, true)?;
                    continue;
                }
                let mut member = 0;
                let start = walk.pos;
                while let Some(t) = walk.field(&mut member)? {
                    if (member, t) == (2, 12) && footer[start] == 0x2C {
                        patches.push(start);
                    }
                    walk.value(t, MAX_DEPTH, false)?;
                }
            }
        }
    }
    for &p in &patches {
        footer[p] = 0x1C;
    }
    Ok(patches.len())
}

/// Checks every page header of a column chunk, following each header's
/// `compressed_page_size` to the next. A dictionary-encoded data page must follow a
/// dictionary page (the crate panics otherwise).
pub fn check_pages(chunk: &[u8]) -> Result<(), String> {
    walk_pages(chunk, |_, _| Ok(()))
}

/// One page's header fields: `(struct, field)` of the `PageHeader` (struct 0) and of the
/// page-type header inside it (its field id), i32s and bools (as 1 / 0).
pub struct PageFields(Ints);

impl PageFields {
    pub fn get(&self, key: (i64, i64)) -> Option<i64> {
        self.0.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
    }
}

/// [`check_pages`], handing each page's header fields and (compressed) body to `page`.
pub fn walk_pages(
    chunk: &[u8],
    mut page: impl FnMut(&PageFields, &[u8]) -> Result<(), String>,
) -> Result<(), String> {
    // `PageHeader` fields: 1 type, 3 compressed_page_size, 5 and 8 the v1 and v2 data
    // page headers, whose fields 2 and 4 are the encoding.
    const DICTIONARY_PAGE: i64 = 2;
    const DICTIONARY_ENCODINGS: [i64; 2] = [2, 8];
    let (mut pos, mut dictionary) = (0, false);
    while pos < chunk.len() {
        let windows = [(0, &chunk[pos..])];
        let mut walk = Walk::new(&windows, chunk.len() - pos);
        let mut ints = Vec::new();
        walk.structure(MAX_DEPTH, Some(&mut ints), 0)?;
        let fields = PageFields(ints);
        dictionary |= fields.get((0, 1)) == Some(DICTIONARY_PAGE);
        let encoding = fields.get((5, 2)).or(fields.get((8, 4)));
        if encoding.is_some_and(|e| DICTIONARY_ENCODINGS.contains(&e)) && !dictionary {
            return Err(format!(
                "page at {pos} is dictionary-encoded without a dictionary"
            ));
        }
        let body = pos + walk.pos;
        let next = fields
            .get((0, 3))
            .and_then(|n| usize::try_from(n).ok())
            .and_then(|n| body.checked_add(n))
            .filter(|end| *end <= chunk.len());
        let next = next.ok_or_else(|| format!("page at {pos} of the column chunk runs past it"))?;
        page(&fields, &chunk[body..next])?;
        pos = next;
    }
    Ok(())
}

type Ints = Vec<((i64, i64), i64)>;

/// Some byte ranges of a buffer of `len` bytes: `(offset, bytes)` windows in offset order.
/// A contiguous buffer is one window at 0.
struct Walk<'a> {
    windows: &'a [(usize, &'a [u8])],
    len: usize,
    pos: usize,
    /// The first offset asked for that no window holds.
    missing: Option<usize>,
}

impl<'a> Walk<'a> {
    fn new(windows: &'a [(usize, &'a [u8])], len: usize) -> Self {
        Walk {
            windows,
            len,
            pos: 0,
            missing: None,
        }
    }

    fn left(&self) -> usize {
        self.len - self.pos
    }

    fn holds(&self, from: usize, to: usize) -> bool {
        let mut p = from;
        while p < to {
            match self.window_at(p) {
                Some((start, bytes)) => p = start + bytes.len(),
                None => return false,
            }
        }
        true
    }

    /// The window holding offset `p`, as (its offset, its bytes).
    fn window_at(&self, p: usize) -> Option<(usize, &'a [u8])> {
        let found = self
            .windows
            .iter()
            .find(|(s, b)| *s <= p && p < s + b.len());
        found.copied()
    }

    /// Appends bytes `[from, to)` to `out`, across windows.
    fn copy(&mut self, from: usize, to: usize, out: &mut Vec<u8>) -> Result<(), String> {
        let mut p = from;
        while p < to {
            let Some((start, bytes)) = self.window_at(p) else {
                self.missing = Some(p);
                return Err(format!("Thrift byte {p} not fetched"));
            };
            let end = to.min(start + bytes.len());
            out.extend_from_slice(&bytes[p - start..end - start]);
            p = end;
        }
        Ok(())
    }

    fn skip(&mut self, n: u64) -> Result<(), String> {
        let n = usize::try_from(n).ok().filter(|n| *n <= self.left());
        let n = n.ok_or("Thrift field runs past the footer")?;
        self.pos += n;
        Ok(())
    }

    fn byte(&mut self) -> Result<u8, String> {
        if self.pos >= self.len {
            return Err("Thrift field runs past the footer".into());
        }
        let Some((start, bytes)) = self.window_at(self.pos) else {
            self.missing = Some(self.pos);
            return Err(format!("Thrift byte {} not fetched", self.pos));
        };
        let b = bytes[self.pos - start];
        self.pos += 1;
        Ok(b)
    }

    fn varint(&mut self) -> Result<u64, String> {
        let mut v = 0u64;
        for shift in (0..70).step_by(7) {
            let b = self.byte()?;
            v |= u64::from(b & 0x7f).checked_shl(shift).unwrap_or(0);
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err("Thrift varint longer than 10 bytes".into())
    }

    /// A collection of `n` elements of type `ty`: at least one byte each.
    fn elements(&mut self, n: u64, types: &[u8], depth: u32) -> Result<(), String> {
        if n == 0 {
            return Ok(());
        }
        if types.iter().any(|t| matches!(*t, BOOL_TRUE | BOOL_FALSE)) {
            return Err("Thrift collection of bools (none in a Parquet footer)".into());
        }
        if n > self.left() as u64 {
            return Err(format!(
                "Thrift collection of {n} elements in {} bytes",
                self.left()
            ));
        }
        for _ in 0..n {
            for &t in types {
                self.value(t, depth - 1, true)?;
            }
        }
        Ok(())
    }

    /// The next field's type, its id in `id` (the previous field's before); `None` at the
    /// struct's stop byte.
    fn field(&mut self, id: &mut i64) -> Result<Option<u8>, String> {
        let header = self.byte()?;
        if header == 0 {
            return Ok(None);
        }
        *id = match header >> 4 {
            0 => zigzag(self.varint()?),
            delta => *id + i64::from(delta),
        };
        Ok(Some(header & 0x0f))
    }

    /// A list or set header: the element count and type.
    fn collection_header(&mut self) -> Result<(u64, u8), String> {
        let header = self.byte()?;
        let n = match header >> 4 {
            15 => self.varint()?,
            n => u64::from(n),
        };
        Ok((n, header & 0x0f))
    }

    /// A struct's fields up to its stop byte. With `ints`, its i32 fields and those of
    /// the structs in it are collected by (outer field id or 0, field id).
    fn structure(
        &mut self,
        depth: u32,
        mut ints: Option<&mut Ints>,
        outer: i64,
    ) -> Result<(), String> {
        let mut id = 0i64;
        while let Some(ty) = self.field(&mut id)? {
            match (ty, ints.as_deref_mut()) {
                (5, Some(ints)) => ints.push(((outer, id), zigzag(self.varint()?))),
                (BOOL_TRUE | BOOL_FALSE, Some(ints)) => {
                    ints.push(((outer, id), i64::from(ty == BOOL_TRUE)))
                }
                (12, Some(ints)) if outer == 0 => self.structure(depth - 1, Some(ints), id)?,
                (ty, _) => self.value(ty, depth - 1, false)?,
            }
        }
        Ok(())
    }

    fn value(&mut self, ty: u8, depth: u32, in_collection: bool) -> Result<(), String> {
        if depth == 0 {
            return Err("Thrift structure nested too deep".into());
        }
        match ty {
            // A bool field is all in its header; in a collection it is one byte.
            BOOL_TRUE | BOOL_FALSE => {
                if in_collection {
                    self.byte()?;
                }
            }
            3 => self.skip(1)?,
            4..=6 => drop(self.varint()?),
            7 => self.skip(8)?,
            8 => {
                let n = self.varint()?;
                self.skip(n)?
            }
            9 | 10 => {
                let (n, ty) = self.collection_header()?;
                self.elements(n, &[ty], depth)?
            }
            11 => {
                let n = self.varint()?;
                if n > 0 {
                    let kv = self.byte()?;
                    self.elements(n, &[kv >> 4, kv & 0x0f], depth)?
                }
            }
            12 => self.structure(depth, None, 0)?,
            13 => self.skip(16)?,
            other => return Err(format!("unknown Thrift type {other}")),
        }
        Ok(())
    }
}

fn zigzag(v: u64) -> i64 {
    (v >> 1) as i64 ^ -((v & 1) as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bool_collections_and_counts_past_the_bytes_are_refused() {
        // Field 1, a list of 2³¹-1 bools: six bytes.
        let bools = [0x19, 0xf1, 0xff, 0xff, 0xff, 0x07, 0x00];
        assert!(check_footer(&bools).unwrap_err().contains("bools"));
        // Field 1, a list of 200 i32 in three bytes.
        let long = [0x19, 0xf5, 0xc8, 0x01, 0x00];
        assert!(check_footer(&long).unwrap_err().contains("200 elements"));
        // A map of 100 bool→bool entries.
        let map = [0x1b, 0x64, 0x11, 0x00];
        assert!(check_footer(&map).unwrap_err().contains("bools"));
        let deep = [0x1c; 100];
        assert!(check_footer(&deep).unwrap_err().contains("too deep"));
        // Field 1 i32 = 3, field 2 an empty list, stop.
        check_footer(&[0x15, 0x06, 0x19, 0x00, 0x00]).unwrap();
    }

    /// `FileMetaData` with a schema of a root, `groups` nested groups and a leaf.
    fn nested_schema(groups: usize) -> Vec<u8> {
        let mut f = vec![0x15, 0x02, 0x19, 0xfc];
        let mut n = groups + 2;
        while n >= 0x80 {
            f.push((n & 0x7f) as u8 | 0x80);
            n >>= 7;
        }
        f.push(n as u8);
        // Root: name "r", one child.
        f.extend([0x48, 0x01, b'r', 0x15, 0x02, 0x00]);
        for _ in 0..groups {
            // Optional group "a", one child.
            f.extend([0x35, 0x02, 0x18, 0x01, b'a', 0x15, 0x02, 0x00]);
        }
        // Required int32 "x"; then num_rows 0 and no row groups.
        f.extend([0x15, 0x02, 0x25, 0x00, 0x18, 0x01, b'x', 0x00]);
        f.extend([0x16, 0x00, 0x19, 0x0c, 0x00]);
        f
    }

    #[test]
    fn schemas_nested_too_deep_are_refused() {
        check_footer(&nested_schema(MAX_SCHEMA_DEPTH - 1)).unwrap();
        let e = check_footer(&nested_schema(MAX_SCHEMA_DEPTH)).unwrap_err();
        assert!(e.contains("schema nested deeper"), "{e}");
        // Nine kilobytes that overflowed the stack in the crate's schema decoding.
        let e = check_footer(&nested_schema(1000)).unwrap_err();
        assert!(e.contains("schema nested deeper"), "{e}");
    }

    #[test]
    fn pages_follow_their_compressed_size() {
        // Fields 1-3 (type, sizes 2 and 2), stop, two bytes of page; twice.
        let page = [0x15, 0x00, 0x15, 0x04, 0x15, 0x04, 0x00, 0xaa, 0xbb];
        check_pages(&[page, page].concat()).unwrap();
        assert!(check_pages(&page[..8]).unwrap_err().contains("runs past"));
        let mut bools = vec![0x15, 0x00, 0x15, 0x04, 0x15, 0x04];
        bools.extend([0x09, 0xc8, 0x01, 0xf1, 0xff, 0xff, 0xff, 0xff, 0x07, 0x00]);
        assert!(check_pages(&bools).unwrap_err().contains("bools"));
        // A v1 data page (type 0) whose header (field 5) says RLE_DICTIONARY (8).
        let dict = [
            0x15, 0x00, 0x15, 0x04, 0x15, 0x00, 0x2c, 0x15, 0x02, 0x15, 0x10, 0x00, 0x00,
        ];
        assert!(check_pages(&dict)
            .unwrap_err()
            .contains("without a dictionary"));
        // After a dictionary page (type 2) it reads.
        let first = [0x15, 0x04, 0x15, 0x00, 0x15, 0x00, 0x00];
        check_pages(&[&first[..], &dict].concat()).unwrap();
    }
}
