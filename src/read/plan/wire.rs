//! A plan as bytes, for its slices to be read in another process (a distributed engine's
//! executor): the slices the planner chose and everything reading them takes (the visible
//! instants, the schemas, the filter, incremental bounds), so the reader needs the table's
//! storage and properties and plans nothing again. The pruning statistics stay behind: they
//! describe the planning, which happened here.

use std::io::Cursor;
use std::sync::Arc;

use arrow_schema::{Schema, SchemaRef};
use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use serde::{Deserialize, Serialize};

use super::{Plan, PlanStats, QueryType};
use crate::error::{HudiError, Result};
use crate::expr::Expr;
use crate::file_group::FileSlice;
use crate::schema::evolution::SchemaEvolution;
use crate::storage::IoSnapshot;
use crate::timeline::Visibility;

#[derive(Serialize, Deserialize)]
struct Wire {
    query: QueryType,
    as_of: Option<String>,
    start: Option<String>,
    end: Option<String>,
    file_slices: Vec<FileSlice>,
    expected_share: Vec<(String, String, f64)>,
    filter: Option<Expr>,
    incremental_commits: Option<Vec<String>>,
    base_records_in_range: bool,
    /// Arrow IPC stream headers, base64.
    read_schema: String,
    output_schema: String,
    visibility: Visibility,
    partition_values_from_path: bool,
    evolution: Option<SchemaEvolution>,
}

fn wire_error(e: impl std::fmt::Display) -> HudiError {
    HudiError::invalid(format!("a shipped plan: {e}"))
}

/// A schema as text (base64 of an Arrow IPC stream with no batches), for shipped plans.
pub(crate) fn schema_bytes(schema: &Schema) -> Result<String> {
    let mut writer =
        arrow_ipc::writer::StreamWriter::try_new(Vec::new(), schema).map_err(wire_error)?;
    writer.finish().map_err(wire_error)?;
    Ok(BASE64.encode(writer.into_inner().map_err(wire_error)?))
}

/// The schema [`schema_bytes`] wrote.
pub(crate) fn schema_of(text: &str) -> Result<SchemaRef> {
    let bytes = BASE64.decode(text).map_err(wire_error)?;
    let reader =
        arrow_ipc::reader::StreamReader::try_new(Cursor::new(bytes), None).map_err(wire_error)?;
    Ok(reader.schema())
}

impl Plan {
    /// The plan as bytes [`Plan::from_bytes`] reads back (JSON; schemas as Arrow IPC).
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let mut commits: Option<Vec<String>> =
            (self.incremental_commits.as_ref()).map(|c| c.iter().cloned().collect());
        if let Some(c) = &mut commits {
            c.sort_unstable();
        }
        let mut shares: Vec<(String, String, f64)> = (self.expected_share.iter())
            .map(|((p, f), s)| (p.clone(), f.clone(), *s))
            .collect();
        shares.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
        let wire = Wire {
            query: self.query,
            as_of: self.as_of.clone(),
            start: self.start.clone(),
            end: self.end.clone(),
            file_slices: self.file_slices.clone(),
            expected_share: shares,
            filter: self.filter.clone(),
            incremental_commits: commits,
            base_records_in_range: self.base_records_in_range,
            read_schema: schema_bytes(&self.read_schema)?,
            output_schema: schema_bytes(&self.output_schema)?,
            visibility: self.visibility.clone(),
            partition_values_from_path: self.partition_values_from_path,
            evolution: self.evolution.as_deref().cloned(),
        };
        serde_json::to_vec(&wire).map_err(wire_error)
    }

    /// A plan [`Plan::to_bytes`] wrote, without its planning statistics and I/O.
    pub fn from_bytes(bytes: &[u8]) -> Result<Plan> {
        let wire: Wire = serde_json::from_slice(bytes).map_err(wire_error)?;
        Ok(Plan {
            query: wire.query,
            as_of: wire.as_of,
            start: wire.start,
            end: wire.end,
            file_slices: wire.file_slices,
            expected_share: (wire.expected_share.into_iter())
                .map(|(p, f, s)| ((p, f), s))
                .collect(),
            stats: PlanStats::default(),
            io: IoSnapshot::default(),
            filter: wire.filter,
            incremental_commits: wire.incremental_commits.map(|c| c.into_iter().collect()),
            base_records_in_range: wire.base_records_in_range,
            read_schema: schema_of(&wire.read_schema)?,
            output_schema: schema_of(&wire.output_schema)?,
            visibility: wire.visibility,
            partition_values_from_path: wire.partition_values_from_path,
            evolution: wire.evolution.map(Arc::new),
        })
    }
}
