//! Table.
pub struct Table;
