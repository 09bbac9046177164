//! The table's schema as Hudi's `TableSchemaResolver` finds it: the writer schema of the
//! newest visible commit, column ids of tables whose schema evolved on read, and the schema
//! reads see.

use super::*;

impl MetaClient {
    /// The writer schema (Avro JSON, without meta fields) visible at `visibility`, and the
    /// file it came from: the newest visible commit's, else the one the table was created
    /// with (Hudi's `TableSchemaResolver`).
    pub async fn table_avro_schema(
        &self,
        visibility: &Visibility,
    ) -> Result<Option<(String, String)>> {
        if let Some((meta, origin)) = self.schema_commit(visibility).await? {
            let text = meta.schema().unwrap_or_default();
            return Ok(Some((text.to_string(), origin)));
        }
        Ok(self
            .config
            .property("hoodie.table.create.schema")
            .filter(|t| !t.trim().is_empty())
            .map(|t| (t.to_string(), PROPERTIES_FILE.to_string())))
    }

    /// Schema evolution on read at `visibility` (column ids): `None` for tables written
    /// without it, the common case, found in the commit [`Self::table_avro_schema`] reads.
    pub async fn schema_evolution(
        &self,
        visibility: &Visibility,
    ) -> Result<Option<Arc<crate::schema::evolution::SchemaEvolution>>> {
        use crate::schema::evolution::SchemaEvolution;
        let Some((text, origin)) = self.latest_internal_schema(visibility).await? else {
            return Ok(None);
        };
        let history = self.schema_history().await?;
        let history = history
            .as_ref()
            .map(|(bytes, path)| (bytes.as_ref(), path.as_str()));
        Ok(Some(Arc::new(SchemaEvolution::new(
            &text, &origin, history,
        )?)))
    }

    /// The newest InternalSchema history file of a completed write (it lists every version)
    /// and its path; read again only when the timeline was listed anew (an `ALTER TABLE`
    /// elsewhere adds a version).
    pub async fn schema_history(&self) -> Result<Option<SchemaHistory>> {
        let listing = self.listing.load(Ordering::SeqCst);
        let mut held = self.schema_history.lock().await;
        match &*held {
            Some((at, history)) if *at == listing => Ok(history.clone()),
            _ => {
                let history = self.read_schema_history().await?;
                *held = Some((listing, history.clone()));
                Ok(history)
            }
        }
    }

    /// `latest_schema` (InternalSchema JSON) of the commit the schema at `visibility` comes
    /// from, and that commit's file: present when it was written with schema evolution on.
    pub async fn latest_internal_schema(
        &self,
        visibility: &Visibility,
    ) -> Result<Option<(String, String)>> {
        let Some((meta, origin)) = self.schema_commit(visibility).await? else {
            return Ok(None);
        };
        let key = crate::schema::evolution::LATEST_SCHEMA_KEY;
        Ok(meta.extra(key).map(|s| (s.to_string(), origin)))
    }

    /// The newest commit visible at `visibility` whose metadata holds a schema, and where it
    /// came from (its file; an archived one's instant).
    async fn schema_commit(
        &self,
        visibility: &Visibility,
    ) -> Result<Option<(Arc<CommitMetadata>, String)>> {
        let timeline = self.timeline();
        for instant in timeline
            .completed_writes()
            .rev()
            .filter(|i| visibility.is_committed(&i.requested_time))
        {
            let meta = self.commit_metadata(instant).await?;
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

    /// The newest completed file of the InternalSchema history; it lists every version.
    async fn read_schema_history(&self) -> Result<Option<SchemaHistory>> {
        let dir = crate::schema::evolution::HISTORY_DIR;
        let listed = match self.storage.list(dir, false).await {
            Ok(l) => l,
            Err(HudiError::NotFound { .. }) => return Ok(None),
            Err(e) => return Err(e),
        };
        // A write that failed after its history file (Java writes it before completing the
        // commit) leaves one no reader may take, as Java's storage manager skips it.
        let timeline = self.timeline();
        let completed: HashSet<&str> = timeline
            .completed_writes()
            .map(|i| i.requested_time.as_str())
            .collect();
        let newest = listed
            .iter()
            .filter(|o| {
                let file = crate::schema::evolution::history_file_instant(&o.path);
                !o.is_dir && file.is_some_and(|(t, done)| done && completed.contains(t))
            })
            .max_by(|a, b| a.path.cmp(&b.path));
        let Some(file) = newest else {
            return Ok(None);
        };
        let bytes = self
            .storage
            .get(&file.path, Purpose::CommitMetadata)
            .await?;
        Ok(Some((bytes, file.path.clone())))
    }

    /// The table schema visible at `visibility` as Arrow: [`Self::table_avro_schema`], with
    /// the meta columns when they are populated. Every column is nullable.
    pub async fn table_schema(&self, visibility: &Visibility) -> Result<SchemaRef> {
        let data = match self.table_avro_schema(visibility).await? {
            Some((text, origin)) => crate::schema::arrow_schema_from_avro_text(&text, &origin)?,
            None => Schema::empty(),
        };
        Ok(self.read_schema_of(data))
    }

    /// The schema reads see for writer schema `data`: partition columns a table does not
    /// store appended, the meta columns when populated, every column nullable.
    pub fn read_schema_of(&self, mut data: Schema) -> SchemaRef {
        if self.config.drop_partition_columns {
            // Not stored, so not in the writer's schema.
            data = crate::schema::with_partition_columns(
                &data,
                &self.config.partition_fields,
                crate::schema::partition_column_as_string,
            );
        }
        if self.config.populate_meta_fields {
            align::nullable(&crate::schema::with_meta_columns(&data))
        } else {
            align::nullable(&data)
        }
    }
}
