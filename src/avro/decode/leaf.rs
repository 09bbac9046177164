//! Leaf columns: buffers for fixed-width and variable-width values, and the decoder of
//! each leaf kind (promotions and logical types included).

use super::*;

/// Values and validity of a fixed-width column.
pub(super) struct Prim<T> {
    pub(super) values: Vec<T>,
    pub(super) nulls: NullBufferBuilder,
}

impl<T> Default for Prim<T> {
    fn default() -> Self {
        Prim {
            values: Vec::new(),
            nulls: NullBufferBuilder::new(0),
        }
    }
}

impl<T: Default> Prim<T> {
    #[inline]
    pub(super) fn push(&mut self, v: T) {
        self.values.push(v);
        self.nulls.append_non_null();
    }

    pub(super) fn push_null(&mut self) {
        self.values.push(T::default());
        self.nulls.append_null();
    }
}

impl<T: ArrowNativeType> Prim<T> {
    pub(super) fn array<A: ArrowPrimitiveType<Native = T>>(&mut self) -> PrimitiveArray<A> {
        let values = ScalarBuffer::from(std::mem::take(&mut self.values));
        PrimitiveArray::new(values, self.nulls.finish())
    }
}

/// Values, offsets and validity of a variable-width column.
pub(super) struct Var {
    pub(super) offsets: Vec<i32>,
    pub(super) values: Vec<u8>,
    pub(super) nulls: NullBufferBuilder,
}

impl Default for Var {
    fn default() -> Self {
        Var {
            offsets: vec![0],
            values: Vec::new(),
            nulls: NullBufferBuilder::new(0),
        }
    }
}

impl Var {
    #[inline]
    pub(super) fn push(&mut self, v: &[u8]) {
        self.values.extend_from_slice(v);
        self.offsets.push(self.values.len() as i32);
        self.nulls.append_non_null();
    }

    pub(super) fn push_null(&mut self) {
        self.offsets.push(self.values.len() as i32);
        self.nulls.append_null();
    }

    /// Takes the buffers: (offsets, values, nulls).
    pub(super) fn take(
        &mut self,
    ) -> Result<(
        OffsetBuffer<i32>,
        arrow_buffer::Buffer,
        Option<arrow_buffer::NullBuffer>,
    )> {
        if self.values.len() > i32::MAX as usize {
            return Err(HudiError::unsupported(
                "more than 2 GiB of strings in one block",
            ));
        }
        let offsets = std::mem::replace(&mut self.offsets, vec![0]);
        let values = std::mem::take(&mut self.values);
        Ok((
            OffsetBuffer::new(ScalarBuffer::from(offsets)),
            values.into(),
            self.nulls.finish(),
        ))
    }

    pub(super) fn utf8(&mut self) -> Result<ArrayRef> {
        let (o, v, n) = self.take()?;
        Ok(Arc::new(StringArray::try_new(o, v, n).map_err(arrow_err)?))
    }
}

/// How a value is read, and its output buffer.
pub(super) enum Kind {
    /// Writer type `null`: only a count.
    Null(usize),
    Bool(BooleanBufferBuilder, NullBufferBuilder),
    /// int, date, time-millis.
    Int(Prim<i32>),
    /// long, time-micros, timestamps.
    Long(Prim<i64>),
    Float(Prim<f32>),
    Double(Prim<f64>),
    /// bytes, string, uuid-as-string.
    Bytes(Var),
    Enum(Var, Vec<String>),
    Fixed(usize, Prim<u8>),
    /// Decimal on bytes (`None`) or on fixed of that size.
    Decimal(Option<usize>, Prim<i128>),
    /// `[int, long]`-style union, widened to i64.
    IntUnion(Vec<NumBranch>, Prim<i64>),
    /// `[float, double]`-style union, widened to f64.
    FloatUnion(Vec<NumBranch>, Prim<f64>),
    Members(Box<MembersDecoder>),
    Struct(Box<StructDecoder>),
    List(Box<ListDecoder>),
    Map(Box<MapDecoder>),
}

impl Kind {
    pub(super) fn reserve(&mut self, n: usize) {
        match self {
            Kind::Int(p) => p.values.reserve(n),
            Kind::Long(p) | Kind::IntUnion(_, p) => p.values.reserve(n),
            Kind::Float(p) => p.values.reserve(n),
            Kind::Double(p) | Kind::FloatUnion(_, p) => p.values.reserve(n),
            Kind::Bytes(v) | Kind::Enum(v, _) => v.offsets.reserve(n),
            Kind::Decimal(_, p) => p.values.reserve(n),
            Kind::Struct(s) => s.reserve(n),
            _ => {}
        }
    }

    #[inline]
    pub(super) fn decode(&mut self, buf: &mut &[u8]) -> Result<()> {
        match self {
            Kind::Null(n) => *n += 1,
            Kind::Bool(values, nulls) => {
                values.append(read_bool(buf)?);
                nulls.append_non_null();
            }
            Kind::Int(p) => p.push(read_int(buf)?),
            Kind::Long(p) => p.push(read_long(buf)?),
            Kind::Float(p) => p.push(read_f32(buf)?),
            Kind::Double(p) => p.push(read_f64(buf)?),
            Kind::Bytes(v) => v.push(read_bytes(buf)?),
            Kind::Enum(v, symbols) => {
                let i = read_int(buf)?;
                let s = usize::try_from(i)
                    .ok()
                    .and_then(|i| symbols.get(i))
                    .ok_or_else(|| malformed(format!("Avro enum index {i} out of range")))?;
                v.push(s.as_bytes());
            }
            Kind::Fixed(size, p) => {
                p.values.extend_from_slice(read_fixed(buf, *size)?);
                p.nulls.append_non_null();
            }
            Kind::Decimal(fixed, p) => {
                let raw = match fixed {
                    Some(n) => read_fixed(buf, *n)?,
                    None => read_bytes(buf)?,
                };
                p.push(be_i128(raw)?);
            }
            Kind::IntUnion(branches, p) => match read_branch(branches, buf)? {
                NumBranch::Null => p.push_null(),
                NumBranch::Int => p.push(read_int(buf)? as i64),
                _ => p.push(read_long(buf)?),
            },
            Kind::FloatUnion(branches, p) => match read_branch(branches, buf)? {
                NumBranch::Null => p.push_null(),
                NumBranch::Float => p.push(read_f32(buf)? as f64),
                _ => p.push(read_f64(buf)?),
            },
            Kind::Members(m) => m.decode(buf)?,
            Kind::Struct(s) => s.decode(buf)?,
            Kind::List(l) => l.decode(buf)?,
            Kind::Map(m) => m.decode(buf)?,
        }
        Ok(())
    }

    pub(super) fn push_null(&mut self) {
        match self {
            Kind::Null(n) => *n += 1,
            Kind::Bool(values, nulls) => {
                values.append(false);
                nulls.append_null();
            }
            Kind::Int(p) => p.push_null(),
            Kind::Long(p) | Kind::IntUnion(_, p) => p.push_null(),
            Kind::Float(p) => p.push_null(),
            Kind::Double(p) | Kind::FloatUnion(_, p) => p.push_null(),
            Kind::Bytes(v) | Kind::Enum(v, _) => v.push_null(),
            Kind::Fixed(size, p) => {
                // A null costs a byte of input and `size` of output: past the bound the
                // column stops growing, and `finish` reports the short column as damage.
                if p.values.len() + *size <= crate::avro::guard::MAX_VALUE_BYTES {
                    p.values.resize(p.values.len() + *size, 0);
                }
                p.nulls.append_null();
            }
            Kind::Decimal(_, p) => p.push_null(),
            Kind::Members(m) => m.push_null(),
            Kind::Struct(s) => s.push_null(),
            Kind::List(l) => l.push_null(),
            Kind::Map(m) => m.push_null(),
        }
    }

    /// The column as an array of `natural`; the buffers are left empty.
    pub(super) fn finish(&mut self, natural: &DataType) -> Result<ArrayRef> {
        use DataType as D;
        Ok(match self {
            Kind::Null(n) => new_null_array(natural, std::mem::take(n)),
            Kind::Bool(values, nulls) => {
                Arc::new(BooleanArray::new(values.finish(), nulls.finish()))
            }
            Kind::Int(p) => match natural {
                D::Date32 => Arc::new(p.array::<Date32Type>()),
                D::Time32(_) => Arc::new(p.array::<Time32MillisecondType>()),
                _ => Arc::new(p.array::<Int32Type>()),
            },
            Kind::Long(p) => match natural {
                D::Timestamp(unit, tz) => timestamp_array(p, *unit, tz.clone()),
                D::Time64(_) => Arc::new(p.array::<Time64MicrosecondType>()),
                _ => Arc::new(p.array::<Int64Type>()),
            },
            Kind::Float(p) => Arc::new(p.array::<Float32Type>()),
            Kind::Double(p) => Arc::new(p.array::<Float64Type>()),
            Kind::IntUnion(_, p) => Arc::new(p.array::<Int64Type>()),
            Kind::FloatUnion(_, p) => Arc::new(p.array::<Float64Type>()),
            Kind::Bytes(v) if natural == &D::Binary => {
                let (o, values, n) = v.take()?;
                Arc::new(BinaryArray::try_new(o, values, n).map_err(arrow_err)?)
            }
            Kind::Bytes(v) | Kind::Enum(v, _) => v.utf8()?,
            Kind::Fixed(size, p) => {
                let len = p.nulls.len();
                let values = std::mem::take(&mut p.values);
                let array = FixedSizeBinaryArray::try_new_with_len(
                    *size as i32,
                    values.into(),
                    p.nulls.finish(),
                    len,
                );
                Arc::new(array.map_err(arrow_err)?)
            }
            Kind::Decimal(_, p) => {
                let D::Decimal128(precision, scale) = natural else {
                    return Err(malformed("decimal column without a decimal type"));
                };
                let array = p.array::<Decimal128Type>();
                Arc::new(
                    array
                        .with_precision_and_scale(*precision, *scale)
                        .map_err(arrow_err)?,
                )
            }
            Kind::Members(m) => m.finish()?,
            Kind::Struct(s) => s.finish_struct()?,
            Kind::List(l) => l.finish()?,
            Kind::Map(m) => m.finish()?,
        })
    }
}

pub(super) fn timestamp_array(p: &mut Prim<i64>, unit: TimeUnit, tz: Option<Arc<str>>) -> ArrayRef {
    match unit {
        TimeUnit::Millisecond => {
            Arc::new(p.array::<TimestampMillisecondType>().with_timezone_opt(tz))
        }
        TimeUnit::Nanosecond => {
            Arc::new(p.array::<TimestampNanosecondType>().with_timezone_opt(tz))
        }
        _ => Arc::new(p.array::<TimestampMicrosecondType>().with_timezone_opt(tz)),
    }
}

/// The branch an all-numeric union value takes; `int`/`long` only in integer unions and
/// `float`/`double` only in floating ones (see `union_shape`).
pub(super) fn read_branch(branches: &[NumBranch], buf: &mut &[u8]) -> Result<NumBranch> {
    read_union_branch(buf, branches).copied()
}
