//! A write's preparation: the rows checked against the table schema, keyed and
//! de-duplicated, the instant taken (requested beside tagging when that is safe), each key
//! located (tagging), the metadata table's reads for the delta commit; then the change
//! planned and handed to [`super::commit`].

use arrow_array::RecordBatch;

use super::{
    bucket, commit, input, mdt, plan, publish, services, tag, Ctx, KeyGen, KeyedRows, Operation,
    RecordCounts, Tagged, WriteConfig,
};
use crate::config::TableType;
use crate::error::{HudiError, Result};
use crate::merge::MergeRule;
use crate::meta_client::MetaClient;
use crate::snapshot::schema;

/// What a write works out before its first data file: the rows checked and keyed, the
/// instant (requested beside tagging when that is safe), where each key is, and the
/// metadata table's reads for the delta commit.
pub(crate) struct Prepared {
    pub(crate) avro_schema: String,
    pub(crate) schema_on_read: Option<commit::SchemaOnRead>,
    pub(crate) input: RecordBatch,
    pub(crate) rows: KeyedRows,
    pub(crate) tagged: Tagged,
    /// The schema rows are read and written in when the input widens the table's.
    pub(crate) wider_schema: Option<arrow_schema::SchemaRef>,
    pub(crate) mdt_prefetch: Option<mdt::MdtPrefetch>,
    pub(crate) instant: String,
    pub(crate) requested: publish::Requested,
    pub(crate) rule: MergeRule,
    /// The metadata table is due a compaction (this write must not go ahead of it).
    pub(crate) compaction_due: bool,
}

/// Prepares a write on the timeline the table holds now, at `instant` when the time was
/// already taken (under the table lock), else at a new one.
pub(crate) async fn prepare(
    table: &Ctx<'_>,
    batches: &[RecordBatch],
    options: &WriteConfig,
    instant: Option<String>,
) -> Result<Prepared> {
    let client = table.client;
    let config = client.config();
    let visibility = client.timeline().visibility_as_of(None);
    // The metadata table's partitions are listed with its open: the delta commit's layout
    // and the lookups' shards both come from those listings.
    let open_mdt = async {
        if config.metadata_partitions.is_empty() {
            Ok(())
        } else {
            table
                .metadata_table(&config.metadata_partition_names())
                .await
                .map(drop)
        }
    };
    let (schema, ()) =
        futures::future::try_join(schema::table_avro_schema(client, &visibility), open_mdt).await?;
    let (avro_schema, schema_origin) = schema.ok_or_else(|| {
        HudiError::unsupported_in("writing a table with no schema yet", ".hoodie")
    })?;
    // Java's writer carries the column ids forward in every commit and in `.hoodie/.schema/`;
    // a commit without them would leave its readers and writers mapping columns wrongly.
    // (Cached: the commit the schema came from.)
    let schema_on_read = match schema::latest_internal_schema(client, &visibility).await? {
        None => None,
        Some((latest_schema, origin)) => {
            let Some((history, _)) = client.schema_history().await? else {
                return Err(HudiError::unsupported_in(
                    "writing a table whose commits carry column ids (latest_schema) but \
                     whose .hoodie/.schema/ holds no history of a completed write",
                    &origin,
                ));
            };
            Some(commit::SchemaOnRead {
                latest_schema,
                history,
            })
        }
    };
    let mut data_schema = crate::schema::arrow_schema_from_avro_text(&avro_schema, &schema_origin)?;
    // A delete writes no columns: nothing to add.
    let (avro_schema, wider) = if options.add_columns && options.operation != Operation::Delete {
        add_columns(
            client,
            batches,
            avro_schema,
            &schema_origin,
            &mut data_schema,
        )?
    } else {
        (avro_schema, None)
    };
    if wider.is_some() && schema_on_read.is_some() {
        // A new column takes a new id and a new history version; Spark SQL's
        // `ALTER TABLE … ADD COLUMNS` makes them.
        return Err(HudiError::unsupported_in(
            "adding columns to a table whose schema evolved on read (its columns have ids); \
             add them with ALTER TABLE … ADD COLUMNS in Apache Hudi Spark first",
            &schema_origin,
        ));
    }
    let keygen = KeyGen::of(config)?;
    let rule = MergeRule::of(config)?;
    // Input: aligned to the table schema, keyed, de-duplicated (before any request that
    // changes storage).
    // A table that does not store its partition columns still takes them as input, typed
    // as given: they make the partition path, as Java's key generator reads them, and stay
    // out of files.
    let input_schema = if config.drop_partition_columns {
        crate::schema::with_partition_columns(&data_schema, &config.partition_fields, |name| {
            batches
                .iter()
                .find_map(|b| b.schema().field_with_name(name).ok().cloned())
                .unwrap_or_else(|| crate::schema::partition_column_as_string(name))
        })
    } else {
        data_schema.clone()
    };
    let input = input::align_input(batches, &input_schema, config, options.operation)?;
    let rows = input::keyed_rows(&input, &keygen, config, rule)?;
    let compaction_due = services::mdt_compaction::is_due(table, options).await?;
    let global = tag::is_global(config, options);
    // The metadata table's reads for the delta commit (index definitions, layout, the
    // rows' partition stats) beside tagging: independent chains of round trips.
    let row_partitions: std::collections::BTreeSet<String> =
        rows.rows.iter().map(|(_, p, _)| p.clone()).collect();
    let mdt_reads = async {
        if config.metadata_partitions.is_empty() {
            return Ok(None);
        }
        let mdt = table.metadata_table(&[]).await?;
        let storage = client.storage().as_ref();
        mdt::prefetch(storage, &mdt, config, &row_partitions, None)
            .await
            .map(Some)
    };
    // The instant is taken now and, as Java requests it before tagging, its requested file
    // goes beside tagging's reads — unless the write may yet change nothing (deletes of
    // absent keys), be refused for a pending clustering plan, or wait for a compaction.
    let instant = match instant {
        Some(t) => t,
        None => publish::new_instant(table).await?,
    };
    let early = !compaction_due && early_request(client, options);
    let requested = publish::Requested::new(config, &instant, early);
    let reads = async {
        // Not cut short by a failure: the requested put must have settled before a
        // withdrawal looks at it.
        // Polled in this order: the requests go out before tagging's CPU (a lookup in
        // cached metadata decodes without waiting).
        let (put, mdt_prefetch, tagged) = futures::future::join3(
            requested.put_early(client.storage().as_ref()),
            mdt_reads,
            tag::tag(table, &rows, global),
        )
        .await;
        put?;
        let (mut tagged, mdt_prefetch) = (tagged?, mdt_prefetch?);
        tag::check_pending_clustering(table, &mut tagged).await?;
        Ok::<_, HudiError>((tagged, mdt_prefetch))
    };
    let (tagged, mdt_prefetch) = match reads.await {
        Ok(r) => r,
        Err(e) => {
            requested.withdraw(client.storage().as_ref()).await;
            return Err(e);
        }
    };
    Ok(Prepared {
        avro_schema,
        schema_on_read,
        input,
        rows,
        tagged,
        wider_schema: wider,
        mdt_prefetch,
        instant,
        requested,
        rule,
        compaction_due,
    })
}

/// The table's schema widened by the input's new columns, as Avro text (this commit's
/// writer schema), as Arrow data columns (into `data_schema`) and as the read schema with
/// meta columns; `None` when the input adds nothing.
fn add_columns(
    client: &MetaClient,
    batches: &[RecordBatch],
    avro_schema: String,
    origin: &str,
    data_schema: &mut arrow_schema::Schema,
) -> Result<(String, Option<arrow_schema::SchemaRef>)> {
    let added = input::added_columns(batches, data_schema, client.config())?;
    if added.is_empty() {
        return Ok((avro_schema, None));
    }
    let table: serde_json::Value = serde_json::from_str(&avro_schema)
        .map_err(|e| HudiError::corrupt_by(origin, "the table's Avro schema", e))?;
    // A column the input cannot add is the input's fault.
    let wider = crate::schema::to_avro::with_added_fields(&table, &added)
        .map_err(|e| match e {
            HudiError::InvalidArgument(why) => HudiError::invalid_input(why),
            other => other,
        })?
        .to_string();
    *data_schema = crate::schema::arrow_schema_from_avro_text(&wider, origin)?;
    let read_schema = crate::snapshot::schema::read_schema_of(client.config(), data_schema.clone());
    Ok((wider, Some(read_schema)))
}

/// Plans the file groups' changes and commits them.
pub(crate) async fn commit_prepared(
    table: &Ctx<'_>,
    options: &WriteConfig,
    prepared: &mut Prepared,
    stale_markers: Vec<String>,
    committer: publish::Committer,
) -> Result<(RecordCounts, commit::Outcome)> {
    let client = table.client;
    let config = client.config();
    let mut counts = RecordCounts {
        deduplicated: prepared.rows.deduplicated,
        ..RecordCounts::default()
    };
    let update_partition = options.update_partition_path;
    let mut plan = plan::plan_changes(
        std::mem::take(&mut prepared.rows.rows),
        std::mem::take(&mut prepared.tagged.locations),
        options.operation,
        update_partition,
        &mut counts,
    );
    let tagged = &prepared.tagged;
    let snapshot = (tagged.snapshot.clone())
        .ok_or_else(|| HudiError::invalid("tagging produced no snapshot"))?;
    let slices: Vec<crate::file_group::FileSlice> = snapshot.latest_slices().cloned().collect();
    let slices = slices.as_slice();
    match bucket::layout(config, &options.bucket, options.index_type, slices)? {
        Some(buckets) => bucket::route(&mut plan, slices, &buckets)?,
        None if plan.inserts.is_empty() => {}
        None => {
            if let Some(mode) = small_files(client, options) {
                let average = plan::average_record_bytes(client).await?;
                let free: Vec<crate::file_group::FileSlice>;
                let candidates = if tagged.clustering.is_empty() {
                    slices
                } else {
                    let busy = |s: &crate::file_group::FileSlice| {
                        (tagged.clustering).contains(&(s.partition.clone(), s.file_id.clone()))
                    };
                    free = slices.iter().filter(|s| !busy(s)).cloned().collect();
                    &free
                };
                plan::pack_small_files(&mut plan, candidates, options, average, mode);
            }
        }
    }
    let outcome = commit::commit(
        table,
        commit::Inputs {
            input: &prepared.input,
            avro_schema: &prepared.avro_schema,
            schema_on_read: prepared.schema_on_read.as_ref(),
            plan,
            operation: options.operation,
            rule: prepared.rule,
            base_file: options.base_file.clone(),
            read_schema: (prepared.wider_schema.clone()).unwrap_or_else(|| snapshot.schema.clone()),
            snapshot,
            mdt_prefetch: prepared.mdt_prefetch.take(),
            instant: prepared.instant.clone(),
            requested: &prepared.requested,
            stale_markers,
            committer,
        },
    )
    .await?;
    Ok((counts, outcome))
}

/// How new keys fill small files (`None`: they start new file groups). Merge-On-Read
/// tables with a compaction pending leave its file groups alone: new keys go to new groups.
fn small_files(client: &MetaClient, options: &WriteConfig) -> Option<plan::SmallFiles> {
    let config = client.config();
    if config.table_type == TableType::CopyOnWrite {
        return Some(plan::SmallFiles::CopyOnWrite);
    }
    if client.timeline().pending().any(|i| i.is_compaction()) {
        return None;
    }
    let record_index = config
        .metadata_partitions
        .iter()
        .any(|p| p == crate::metadata::table::RECORD_INDEX);
    let log_indexed = match options.index_type {
        None => record_index,
        Some(t) => t == super::config::IndexType::RecordIndex && record_index,
    };
    Some(if log_indexed {
        plan::SmallFiles::LogIndexed
    } else {
        plan::SmallFiles::BaseFilesOnly
    })
}

/// Whether the requested instant may go out beside tagging: not when the write may turn
/// out to change nothing (deletes of absent keys) or to be refused (a pending clustering
/// plan), which must leave storage untouched.
fn early_request(client: &MetaClient, options: &WriteConfig) -> bool {
    options.operation != Operation::Delete
        && !client.timeline().pending().any(|i| {
            let action = i.requested_action();
            action == crate::timeline::action::CLUSTERING
                || action == crate::timeline::action::REPLACE_COMMIT
        })
}
