//! The table's schema as Hudi's `TableSchemaResolver` finds it: the writer schema of the
//! newest visible commit, column ids of tables whose schema evolved on read, and the schema
//! reads see.

use std::sync::Arc;

use arrow_schema::{Schema, SchemaRef};

use crate::config::{TableConfig, PROPERTIES_FILE};
use crate::error::Result;
use crate::meta_client::MetaClient;
use crate::schema::align;
use crate::schema::evolution::SchemaEvolution;
use crate::timeline::{CommitMetadata, Visibility};

/// The writer schema (Avro JSON, without meta fields) visible at `visibility`, and the file
/// it came from: the newest visible commit's, else the one the table was created with.
pub async fn table_avro_schema(
    client: &MetaClient,
    visibility: &Visibility,
) -> Result<Option<(String, String)>> {
    if let Some((meta, origin)) = schema_commit(client, visibility).await? {
        let text = meta.schema().unwrap_or_default();
        return Ok(Some((text.to_string(), origin)));
    }
    Ok(client
        .config()
        .property("hoodie.table.create.schema")
        .filter(|t| !t.trim().is_empty())
        .map(|t| (t.to_string(), PROPERTIES_FILE.to_string())))
}

/// Schema evolution on read at `visibility` (column ids): `None` for tables written without
/// it, the common case, found in the commit [`table_avro_schema`] reads.
pub async fn schema_evolution(
    client: &MetaClient,
    visibility: &Visibility,
) -> Result<Option<Arc<SchemaEvolution>>> {
    let Some((text, origin)) = latest_internal_schema(client, visibility).await? else {
        return Ok(None);
    };
    let history = client.schema_history().await?;
    let history = history
        .as_ref()
        .map(|(bytes, path)| (bytes.as_ref(), path.as_str()));
    Ok(Some(Arc::new(SchemaEvolution::new(
        &text, &origin, history,
    )?)))
}

/// `latest_schema` (InternalSchema JSON) of the commit the schema at `visibility` comes
/// from, and that commit's file: present when it was written with schema evolution on.
pub async fn latest_internal_schema(
    client: &MetaClient,
    visibility: &Visibility,
) -> Result<Option<(String, String)>> {
    let Some((meta, origin)) = schema_commit(client, visibility).await? else {
        return Ok(None);
    };
    let key = crate::schema::evolution::LATEST_SCHEMA_KEY;
    Ok(meta.extra(key).map(|s| (s.to_string(), origin)))
}

/// The newest commit visible at `visibility` whose metadata holds a schema, and where it
/// came from (its file; an archived one's instant).
async fn schema_commit(
    client: &MetaClient,
    visibility: &Visibility,
) -> Result<Option<(Arc<CommitMetadata>, String)>> {
    let timeline = client.timeline();
    for instant in timeline
        .completed_writes()
        .rev()
        .filter(|i| visibility.is_committed(&i.requested_time))
    {
        let meta = client.commit_metadata(instant).await?;
        if meta.schema().is_some() {
            let origin = if instant.archived {
                instant.requested_time.clone()
            } else {
                instant.file.clone()
            };
            return Ok(Some((meta, origin)));
        }
    }
    Ok(None)
}

/// The table schema visible at `visibility` as Arrow: [`table_avro_schema`], with the meta
/// columns when they are populated. Every column is nullable.
pub async fn table_schema(client: &MetaClient, visibility: &Visibility) -> Result<SchemaRef> {
    let data = match table_avro_schema(client, visibility).await? {
        Some((text, origin)) => crate::schema::arrow_schema_from_avro_text(&text, &origin)?,
        None => Schema::empty(),
    };
    Ok(read_schema_of(client.config(), data))
}

/// The schema reads see for writer schema `data`: partition columns a table does not store
/// appended, the meta columns when populated, every column nullable.
pub fn read_schema_of(config: &TableConfig, mut data: Schema) -> SchemaRef {
    if config.drop_partition_columns {
        // Not stored, so not in the writer's schema.
        data = crate::schema::with_partition_columns(
            &data,
            &config.partition_fields,
            crate::schema::partition_column_as_string,
        );
    }
    if config.populate_meta_fields {
        align::nullable(&crate::schema::with_meta_columns(&data))
    } else {
        align::nullable(&data)
    }
}
