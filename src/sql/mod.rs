//! SQL over Hudi tables with DataFusion (cargo feature `datafusion`, native only): a
//! [`HudiTable`] provider whose scans this engine plans and reads (filters pushed into the
//! planner's pruning by partition values, record index, partition and column statistics and
//! footers; one DataFusion partition per group of file slices), a table factory for
//! `CREATE EXTERNAL TABLE t STORED AS HUDI LOCATION '…'`, the `hudi` schema that opens
//! `hudi."LOCATION"` on first use, and [`SqlSession`], what `hudi-edge sql` runs.
//!
//! DataFusion is built on another arrow major than this crate: batches cross at the Arrow C
//! data interface ([`ffi`]), without copying.

#[cfg(feature = "ballista")]
pub mod codec;
#[cfg(feature = "ballista")]
pub mod distributed;
pub mod ffi;
pub mod filters;
pub mod provider;
mod stats;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use datafusion::catalog::{SchemaProvider, Session, TableProvider, TableProviderFactory};
use datafusion::execution::session_state::SessionStateBuilder;
use datafusion::logical_expr::CreateExternalTable;
use datafusion::prelude::{SessionConfig, SessionContext};

pub use provider::{
    HudiScanExec, HudiTable, Opener, ScanParts, ScanReport, ScanShape, TableHandle, TaskLog,
};

use crate::error::{HudiError, Result};
use crate::read::{QueryType, ReadOptions};
use crate::storage::IoSnapshot;
use crate::table::Table;

/// Every table a session opened, by location, with its provider (shared by the factory, the
/// `hudi` schema and `--table`).
#[derive(Default)]
struct Opened(Mutex<Vec<Arc<HudiTable>>>);

impl Opened {
    fn push(&self, table: Arc<HudiTable>) {
        if let Ok(mut t) = self.0.lock() {
            t.push(table);
        }
    }

    fn all(&self) -> Vec<Arc<HudiTable>> {
        self.0.lock().map(|t| t.clone()).unwrap_or_default()
    }
}

struct Shared {
    opener: Opener,
    defaults: ReadOptions,
    opened: Opened,
}

impl Shared {
    async fn open(&self, location: &str, options: ReadOptions) -> Result<Arc<HudiTable>> {
        let storage = (self.opener)(location)?;
        let table = Table::open_with(storage, None, options.use_metadata_table).await?;
        let provider = Arc::new(HudiTable::new(Arc::new(table), location, options).await?);
        self.opened.push(provider.clone());
        Ok(provider)
    }
}

/// The read options a table's `OPTIONS (…)` ask for, over `defaults`. Spark's keys are
/// taken, and short ones: `hoodie.datasource.query.type` / `query`, `as.of.instant` /
/// `as_of`, `hoodie.datasource.read.begin.instanttime` / `start`,
/// `hoodie.datasource.read.end.instanttime` / `end`.
pub fn read_options(
    options: &HashMap<String, String>,
    defaults: &ReadOptions,
) -> Result<ReadOptions> {
    let mut out = defaults.clone();
    for (key, value) in options {
        // DataFusion prefixes the keys of `OPTIONS` it does not know with `format.`.
        let key = key.strip_prefix("format.").unwrap_or(key);
        match key.to_ascii_lowercase().as_str() {
            "hoodie.datasource.query.type" | "query" | "query_type" => {
                out.query = query_type(value)?
            }
            "as.of.instant" | "as_of" | "hoodie.read.as.of.timestamp" => {
                out.as_of = Some(value.clone())
            }
            "hoodie.datasource.read.begin.instanttime" | "start" => {
                out.query = QueryType::Incremental;
                out.start = Some(value.clone())
            }
            "hoodie.datasource.read.end.instanttime" | "end" => out.end = Some(value.clone()),
            other => {
                return Err(HudiError::invalid(format!(
                    "unknown Hudi table option {other:?} (query, as_of, start, end)"
                )))
            }
        }
    }
    Ok(out)
}

/// A query type a scan can take; the change feed is refused by name (its rows are changes,
/// not the table's records, and it plans no scan).
pub fn query_type(value: &str) -> Result<QueryType> {
    if value.eq_ignore_ascii_case("cdc") {
        return Err(HudiError::unsupported(
            "the change feed (query type cdc) in SQL; `hudi-edge read --query cdc` reads it",
        ));
    }
    QueryType::parse(value)
}

/// `CREATE EXTERNAL TABLE t STORED AS HUDI LOCATION '…' [OPTIONS (…)]`.
pub struct HudiTableFactory(Arc<Shared>);

impl std::fmt::Debug for HudiTableFactory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HudiTableFactory")
    }
}

impl HudiTableFactory {
    /// A factory opening locations with `opener`, reading with `defaults` unless a table's
    /// options say otherwise.
    pub fn new(opener: Opener, defaults: ReadOptions) -> Self {
        HudiTableFactory(Arc::new(Shared {
            opener,
            defaults,
            opened: Opened::default(),
        }))
    }
}

#[async_trait]
impl TableProviderFactory for HudiTableFactory {
    async fn create(
        &self,
        _state: &dyn Session,
        cmd: &CreateExternalTable,
    ) -> datafusion::common::Result<Arc<dyn TableProvider>> {
        let options = read_options(&cmd.options, &self.0.defaults).map_err(provider::df_error)?;
        let [location] = cmd.locations.as_slice() else {
            let message = "a Hudi table has one LOCATION";
            return Err(provider::df_error(HudiError::invalid(message)));
        };
        let table = self.0.open(location, options).await;
        Ok(table.map_err(provider::df_error)?)
    }
}

/// The schema `hudi`: `SELECT … FROM hudi."s3://bucket/table"` opens the table on first use.
struct HudiSchema(Arc<Shared>, Mutex<HashMap<String, Arc<HudiTable>>>);

impl std::fmt::Debug for HudiSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HudiSchema")
    }
}

#[async_trait]
impl SchemaProvider for HudiSchema {
    fn table_names(&self) -> Vec<String> {
        self.1
            .lock()
            .map(|t| t.keys().cloned().collect())
            .unwrap_or_default()
    }

    async fn table(
        &self,
        name: &str,
    ) -> datafusion::common::Result<Option<Arc<dyn TableProvider>>> {
        if let Some(t) = self.1.lock().ok().and_then(|t| t.get(name).cloned()) {
            return Ok(Some(t));
        }
        let table = self.0.open(name, self.0.defaults.clone()).await;
        let table = table.map_err(provider::df_error)?;
        if let Ok(mut t) = self.1.lock() {
            t.insert(name.to_string(), table.clone());
        }
        Ok(Some(table))
    }

    fn table_exist(&self, _name: &str) -> bool {
        true
    }
}

/// Rows of a query, in this crate's arrow.
pub struct SqlResult {
    pub schema: arrow_schema::SchemaRef,
    pub batches: Vec<arrow_array::RecordBatch>,
}

/// One table's part in a session: every scan, and its I/O.
#[derive(Debug, Clone, serde::Serialize)]
pub struct TableReport {
    pub location: String,
    pub scans: Vec<ScanReport>,
    pub io: IoSnapshot,
}

/// A DataFusion session that knows Hudi tables: `STORED AS HUDI`, the `hudi` schema, and
/// tables registered by name.
pub struct SqlSession {
    ctx: SessionContext,
    shared: Arc<Shared>,
}

impl SqlSession {
    pub fn new(opener: Opener, defaults: ReadOptions) -> Result<SqlSession> {
        let (state, shared) = Self::state(opener, defaults, |c| c);
        Self::with_context(SessionContext::new_with_state(state), shared)
    }

    /// A session whose queries run on the Ballista cluster whose scheduler is at `url`
    /// (`df://host:port`): it plans them logically, the scheduler plans the scans and
    /// executors read them. Tables open with `opener` here, and on the cluster with the
    /// opener its processes were started with.
    #[cfg(feature = "ballista")]
    pub async fn remote(url: &str, opener: Opener, defaults: ReadOptions) -> Result<SqlSession> {
        use ballista::prelude::SessionContextExt;
        let codec_opener = opener.clone();
        let (state, shared) = Self::state(opener, defaults, move |c| {
            distributed::client_config(c, codec_opener)
        });
        let ctx = SessionContext::remote_with_state(url, state)
            .await
            .map_err(sql_error)?;
        // One partition per task: a scan's partitions spread over the executors rather than
        // filling the first one's slots.
        let one = ctx
            .state_ref()
            .write()
            .config_mut()
            .options_mut()
            .set("ballista.scheduler.max_partitions_per_task", "1");
        one.map_err(sql_error)?;
        Self::with_context(ctx, shared)
    }

    fn state(
        opener: Opener,
        defaults: ReadOptions,
        configure: impl FnOnce(SessionConfig) -> SessionConfig,
    ) -> (datafusion::execution::SessionState, Arc<Shared>) {
        let factory = HudiTableFactory::new(opener, defaults);
        let shared = factory.0.clone();
        // Column names as the table's schema spells them (`byteField`), unquoted: Hudi
        // schemas are often camelCase, and Spark users write them so.
        let config = SessionConfig::new()
            .set_bool("datafusion.sql_parser.enable_ident_normalization", false);
        let state = SessionStateBuilder::new()
            .with_config(configure(config))
            .with_default_features()
            .with_table_factory("HUDI".into(), Arc::new(factory))
            .build();
        (state, shared)
    }

    fn with_context(ctx: SessionContext, shared: Arc<Shared>) -> Result<SqlSession> {
        let schema = Arc::new(HudiSchema(shared.clone(), Mutex::new(HashMap::new())));
        let catalog = ctx
            .catalog("datafusion")
            .ok_or_else(|| HudiError::invalid("DataFusion's default catalog is missing"))?;
        catalog.register_schema("hudi", schema).map_err(sql_error)?;
        Ok(SqlSession { ctx, shared })
    }

    pub fn context(&self) -> &SessionContext {
        &self.ctx
    }

    /// Opens `location` and names it `name`, read with the session's defaults.
    pub async fn register(&self, name: &str, location: &str) -> Result<()> {
        let table = self
            .shared
            .open(location, self.shared.defaults.clone())
            .await?;
        self.ctx.register_table(name, table).map_err(sql_error)?;
        Ok(())
    }

    /// Runs the statements of `sql` (separated by `;`) in order; the rows of the last.
    pub async fn run(&self, sql: &str) -> Result<SqlResult> {
        let frame = self.last_statement(sql).await?;
        let schema = Arc::new(ffi::schema_from_df_schema(frame.schema().as_arrow())?);
        let batches = frame.collect().await.map_err(sql_error)?;
        let batches = (batches.into_iter())
            .map(ffi::batch_from_df)
            .collect::<Result<Vec<_>>>()?;
        Ok(SqlResult { schema, batches })
    }

    /// DataFusion's physical plan of the last statement (the ones before it run), with the
    /// filters each Hudi scan pushed and the slices its plan selected.
    pub async fn explain(&self, sql: &str) -> Result<String> {
        let frame = self.last_statement(sql).await?;
        let plan = frame.create_physical_plan().await.map_err(sql_error)?;
        let shown = datafusion::physical_plan::displayable(plan.as_ref())
            .indent(true)
            .to_string();
        Ok(shown)
    }

    /// Runs every statement of `sql` but the last, which it plans.
    async fn last_statement(&self, sql: &str) -> Result<datafusion::dataframe::DataFrame> {
        let statements = split_statements(sql);
        let Some((last, before)) = statements.split_last() else {
            return Err(HudiError::invalid("no SQL statement"));
        };
        for statement in before {
            let frame = self.ctx.sql(statement).await.map_err(sql_error)?;
            frame.collect().await.map_err(sql_error)?;
        }
        self.ctx.sql(last).await.map_err(sql_error)
    }

    /// The tables opened so far, their scans and I/O.
    pub fn report(&self) -> Vec<TableReport> {
        (self.shared.opened.all().iter())
            .map(|t| TableReport {
                location: t.location().to_string(),
                scans: t.scans(),
                io: t.table().map(|t| t.io()).unwrap_or_default(),
            })
            .collect()
    }
}

fn sql_error(e: datafusion::error::DataFusionError) -> HudiError {
    // An engine error raised inside a scan keeps its code.
    let e = match e.find_root() {
        datafusion::error::DataFusionError::External(inner) => {
            if let Some(h) = inner.downcast_ref::<HudiError>() {
                return h.clone();
            }
            e
        }
        _ => e,
    };
    HudiError::invalid(format!("SQL: {e}"))
}

/// `a; b` as `["a", "b"]`, leaving `;` inside quotes alone.
fn split_statements(sql: &str) -> Vec<String> {
    let (mut out, mut current, mut quote) = (Vec::new(), String::new(), None::<char>);
    for c in sql.chars() {
        match (quote, c) {
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, ';') => {
                out.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    out.push(current);
    out.into_iter()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::split_statements;

    #[test]
    fn statements_split_outside_quotes() {
        assert_eq!(
            split_statements("CREATE EXTERNAL TABLE t STORED AS HUDI LOCATION 'a;b'; SELECT 1;"),
            vec![
                "CREATE EXTERNAL TABLE t STORED AS HUDI LOCATION 'a;b'",
                "SELECT 1"
            ]
        );
    }
}
