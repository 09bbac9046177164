//! A snapshot: the table at one instant — its timeline and the instants visible, the schema,
//! the file-system view and the metadata table — built once per read or write. Read planning
//! prunes its latest slices ([`crate::read::plan()`]); a write tags keys against them and
//! table services plan from them ([`crate::write`]).
//!
//! Where the data files come from (the metadata table's `files` partition, or a listing),
//! schema resolution and time travel live here, beside the snapshot they serve;
//! [`crate::meta_client`] only loads and caches.

pub mod listing;
pub mod schema;
mod source;
pub mod time_travel;

use std::future::Future;
use std::sync::Arc;

use arrow_schema::SchemaRef;

use crate::error::Result;
use crate::file_group::view::{self, FileSystemView};
use crate::file_group::FileSlice;
use crate::meta_client::MetaClient;
use crate::metadata::table::FILES;
use crate::metadata::{MetadataCache, MetadataTable};
use crate::schema::evolution::SchemaEvolution;
use crate::timeline::{Timeline, Visibility};

/// Where a snapshot's data files came from, and why.
#[derive(Debug, Clone, Default)]
pub struct Source {
    /// "listing", "metadata_table" or "timeline" (nothing visible to list).
    pub kind: String,
    pub notes: Vec<String>,
}

/// The table at one instant.
#[derive(Debug)]
pub struct Snapshot {
    pub timeline: Arc<Timeline>,
    pub visibility: Visibility,
    /// The newest completed write visible (requested time), when there is one.
    pub instant: Option<String>,
    /// The schema reads see (meta columns when populated, every column nullable).
    pub schema: SchemaRef,
    /// Column ids of a table whose schema evolved on read.
    pub evolution: Option<Arc<SchemaEvolution>>,
    pub view: FileSystemView,
    /// The metadata table, when the snapshot's files came from it (its indexes can prune).
    pub metadata_table: Option<Arc<MetadataTable>>,
    pub source: Source,
}

/// Which snapshot to build.
pub struct Request<'a> {
    pub timeline: Arc<Timeline>,
    pub visibility: Visibility,
    /// Plan from the metadata table's `files` partition where it can be trusted.
    pub use_metadata_table: bool,
    /// Metadata-table partitions listed with its open (the indexes a read may consult).
    pub prefetch: &'a [&'a str],
    /// Where the schema is taken when not at `visibility` (incremental reads: the latest).
    pub schema_at: Option<Visibility>,
}

impl Request<'_> {
    /// The table's latest snapshot, from its metadata table where it has one.
    pub fn latest(client: &MetaClient) -> Request<'static> {
        let timeline = client.timeline();
        Request {
            visibility: timeline.visibility_as_of(None),
            timeline,
            use_metadata_table: true,
            prefetch: &[FILES],
            schema_at: None,
        }
    }
}

impl Snapshot {
    pub async fn load(
        client: &MetaClient,
        metadata: &MetadataCache,
        request: Request<'_>,
    ) -> Result<Snapshot> {
        let nothing = |_| (false, std::future::ready(()));
        Ok(Self::load_with(client, metadata, request, nothing).await?.0)
    }

    /// [`Snapshot::load`], running `beside` in the round trips of the listing once the
    /// metadata table is open (a read's index lookups). `beside` also says whether a base
    /// file's footer length is worth probing after the listing (a lookup that reads
    /// footers next).
    pub async fn load_with<T, F>(
        client: &MetaClient,
        metadata: &MetadataCache,
        request: Request<'_>,
        beside: impl FnOnce(Option<Arc<MetadataTable>>) -> (bool, F),
    ) -> Result<(Snapshot, T)>
    where
        F: Future<Output = T>,
    {
        let visibility = &request.visibility;
        let mut source = Source::default();
        // The schema (a commit's metadata), the metadata table's open and the listing are
        // independent: one round trip for all. Boxed: the nested joins would otherwise
        // inline into one large state machine.
        let files = Box::pin(async {
            let mdt = source::metadata_for_planning(
                client,
                metadata,
                request.use_metadata_table,
                visibility,
                request.prefetch,
            )
            .await;
            let (probe, extra) = beside(mdt.as_ref().ok().cloned());
            let listing = async {
                let listed = source::data_files(client, mdt, visibility, &mut source).await;
                if let (true, Ok((files, Some(_)))) = (probe, &listed) {
                    let base_files = files
                        .iter()
                        .map(|f| (crate::storage::join(&f.partition, &f.name), f.size));
                    client.probe_footer_len(base_files).await;
                }
                listed
            };
            futures::join!(
                listing,
                listing::replaced_file_groups(client, visibility),
                extra
            )
        });
        let schema_at = request.schema_at.as_ref().unwrap_or(visibility);
        let (schema, evolution, (listed, replaced, extra)) = futures::join!(
            schema::table_schema(client, schema_at),
            schema::schema_evolution(client, schema_at),
            files
        );
        let (schema, evolution) = (schema?, evolution?);
        let (files, metadata_table) = listed?;
        let view = view::build(files, visibility, client.config(), &replaced?);
        let instant = (request.timeline.completed_writes().rev())
            .find(|i| visibility.is_committed(&i.requested_time))
            .map(|i| i.requested_time.clone());
        let snapshot = Snapshot {
            timeline: request.timeline,
            visibility: request.visibility,
            instant,
            schema,
            evolution,
            view,
            metadata_table,
            source,
        };
        Ok((snapshot, extra))
    }

    /// The latest slice of every file group.
    pub fn latest_slices(&self) -> impl Iterator<Item = &FileSlice> {
        self.view.latest_slices()
    }
}
