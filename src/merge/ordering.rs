//! Ordering keys (the "precombine" / ordering fields) of record versions, whether they come
//! from a data record's columns or from a delete record's ordering value.

use std::cmp::Ordering;

use arrow_array::ArrayRef;

use crate::value::Value;

/// Values of all ordering fields of one record (Hudi 1.1 allows several; one is usual, and
/// then no allocation is needed).
#[derive(Debug, Clone, PartialEq)]
pub enum OrderKey {
    One(Value),
    Many(Vec<Value>),
}

impl OrderKey {
    fn values(&self) -> &[Value] {
        match self {
            OrderKey::One(v) => std::slice::from_ref(v),
            OrderKey::Many(v) => v,
        }
    }

    /// The key of a delete record: an `ArrayWrapper` holds one value per ordering field.
    pub fn of_delete(v: &Value) -> OrderKey {
        match v {
            Value::Array(items) => OrderKey::Many(items.clone()),
            other => OrderKey::One(other.clone()),
        }
    }
}

/// Field-by-field comparison; `None` when some pair is of different kinds.
pub fn compare_keys(a: &OrderKey, b: &OrderKey) -> Option<Ordering> {
    if let (OrderKey::One(x), OrderKey::One(y)) = (a, b) {
        return x.compare(y);
    }
    let (a, b) = (a.values(), b.values());
    for (x, y) in a.iter().zip(b) {
        match x.compare(y)? {
            Ordering::Equal => continue,
            other => return Some(other),
        }
    }
    Some(a.len().cmp(&b.len()))
}

/// Ordering key of `row` from the ordering columns.
pub fn key_of(columns: &[ArrayRef], row: usize) -> OrderKey {
    match columns {
        [one] => OrderKey::One(Value::from_array(one.as_ref(), row)),
        many => OrderKey::Many(
            many.iter()
                .map(|c| Value::from_array(c.as_ref(), row))
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_compare_field_by_field() {
        let one = OrderKey::One(Value::Long(3));
        let delete = OrderKey::of_delete(&Value::Array(vec![Value::Int(3), Value::Null]));
        assert_eq!(compare_keys(&one, &delete), Some(Ordering::Less));
        let single = OrderKey::of_delete(&Value::Int(2));
        assert_eq!(compare_keys(&one, &single), Some(Ordering::Greater));
        let text = OrderKey::One(Value::String("a".into()));
        assert_eq!(compare_keys(&text, &single), None);
    }
}
