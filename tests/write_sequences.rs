//! Long random sequences of writes, each checked against a model of Hudi's semantics:
//! upserts mixing updates that win, tie and lose on the ordering field, new keys, keys given
//! twice in a batch, keys deleted earlier coming back, new partitions; inserts; deletes of
//! present and missing keys. After every commit this engine's snapshot equals the model; at
//! the end every earlier commit reads back by time travel, incremental reads return the rows
//! whose last effective write is in range, and hudi-rs agrees on the snapshot and on a time
//! travel. Sequences are long enough to cross the metadata table's compaction.
//! A failing seed reproduces with `HUDI_EDGE_SEQ_SEED=N`; `A..B` runs a range,
//! `HUDI_EDGE_SEQ_STEPS` sets the commits per sequence.

mod common;
#[path = "write/helpers.rs"]
mod helpers;

use std::collections::BTreeMap;
use std::path::Path;

use helpers::*;
use hudi_edge::read::{QueryType, ReadOptions};
use hudi_edge::write::Operation;
use serde_json::{Map, Value};

use common::rng::Rng;

/// A commit (its step) and what it wrote for a key: a row, or `None` for a delete.
type Write = (usize, Option<Map<String, Value>>);

/// The table as Hudi should show it: rows by key (input form), for each key the commit that
/// last changed what a reader sees, and what each commit wrote for it (a row; `None`: a
/// delete), for incremental reads.
#[derive(Clone, Default)]
struct Model {
    rows: BTreeMap<String, Map<String, Value>>,
    changed_at: BTreeMap<String, usize>,
    written: BTreeMap<String, Vec<Write>>,
}

impl Model {
    fn wrote(&mut self, key: &str, step: usize, row: Option<Map<String, Value>>) {
        self.written
            .entry(key.to_string())
            .or_default()
            .push((step, row));
    }

    /// What an incremental read after commit `from` returns. Copy-On-Write: the rows whose
    /// last effective write came after it. Merge-On-Read, as Spark's incremental relation
    /// reads it: the files the range's commits wrote, merged alone (a base file written
    /// before is not), so an update that lost to an older row on ordering shows.
    fn changed_after(&self, from: usize, t: &Table, merge_on_read: bool) -> Model {
        let mut out = Model::default();
        if !merge_on_read {
            out.rows = (self.rows.iter())
                .filter(|(k, _)| self.changed_at.get(*k).is_some_and(|&s| s > from))
                .map(|(k, r)| (k.clone(), r.clone()))
                .collect();
            return out;
        }
        for (key, writes) in &self.written {
            let mut state: Option<&Map<String, Value>> = None;
            for (_, row) in writes.iter().filter(|(s, _)| *s > from) {
                state = match (state, row) {
                    (_, None) => None,
                    (Some(held), Some(new)) if t.order(new) < t.order(held) => Some(held),
                    (_, Some(new)) => Some(new),
                };
            }
            if let Some(row) = state {
                out.rows.insert(key.clone(), row.clone());
            }
        }
        out
    }
}

struct Fixture {
    test: &'static str,
    name: &'static str,
    /// A partition field the test may set to a value no row has (simple key generators).
    new_partitions: Option<&'static str>,
    metadata_table: bool,
}

struct Table<'a> {
    dir: &'a Path,
    keys: Vec<String>,
    /// The model's key: record key and partition values (a key may repeat across partitions).
    model_key: Vec<String>,
    /// Record keys Spark left in two partitions: kept, never written (which one an update
    /// reaches is not this test's question).
    frozen: Vec<String>,
    ordering: Option<String>,
    edit: String,
    /// Rows of the fixture, templates for new keys (their partition values and types).
    templates: Vec<Map<String, Value>>,
}

impl Table<'_> {
    fn key(&self, row: &Map<String, Value>) -> String {
        key_of(&self.model_key, row)
    }
    fn order(&self, row: &Map<String, Value>) -> i64 {
        self.ordering
            .as_ref()
            .and_then(|o| row.get(o))
            .and_then(Value::as_i64)
            .unwrap_or(0)
    }
    fn with_order(&self, row: &mut Map<String, Value>, value: i64) {
        if let Some(o) = &self.ordering {
            row.insert(o.clone(), Value::from(value));
        }
    }
    /// A row for a key no row ever had.
    fn new_row(
        &self,
        rng: &mut Rng,
        serial: u64,
        new_partition: Option<&str>,
    ) -> Map<String, Value> {
        let mut row = self.templates[rng.below(self.templates.len())].clone();
        for (i, f) in self.keys.iter().enumerate() {
            let value = match row.get(f) {
                Some(Value::Number(_)) => Value::from(700_000 + serial as i64 * 10 + i as i64),
                _ => Value::from(format!("seq-{serial}-{i}")),
            };
            row.insert(f.clone(), value);
        }
        if let Some(field) = new_partition {
            let value = match row.get(field) {
                Some(Value::Number(_)) => Value::from(90 + (serial % 7) as i64),
                _ => Value::from(format!("zz-new-{}", serial % 3)),
            };
            row.insert(field.to_string(), value);
        }
        row
    }
}

/// What a sequence exercised, printed at its end.
#[derive(Debug, Default)]
struct Tally {
    updates_won: usize,
    updates_tied: usize,
    updates_lost: usize,
    new_keys: usize,
    returned_keys: usize,
    twins: usize,
    new_partition_rows: usize,
    deleted: usize,
    inserted_by_insert: usize,
    /// Incremental reads where Merge-On-Read's rule gives other rows than the last writes.
    incremental_merge_on_read_differs: usize,
    metadata_table_compactions: usize,
}

/// One step's batch and what the model becomes after it.
struct Step {
    operation: Operation,
    batch: Vec<Map<String, Value>>,
    expect_inserted: u64,
    expect_updated: u64,
    expect_deleted: u64,
    after: Model,
}

/// What a sequence carries from step to step besides the model.
struct Carried {
    /// Rows deleted, candidates to come back.
    gone: Vec<Map<String, Value>>,
    /// Numbers new keys from.
    serial: u64,
    tally: Tally,
}

fn plan_step(
    t: &Table,
    rng: &mut Rng,
    model: &Model,
    carried: &mut Carried,
    step: usize,
    new_partitions: Option<&str>,
) -> Step {
    let Carried {
        gone,
        serial,
        tally,
    } = carried;
    let mut after = model.clone();
    let roll = rng.below(100);
    let present: Vec<&String> = model
        .rows
        .iter()
        .filter(|(_, r)| !t.frozen.contains(&key_of(&t.keys, r)))
        .map(|(k, _)| k)
        .collect();
    if roll < 20 && present.len() > 2 {
        // Delete one to three present keys and one that is missing; whole rows as input.
        let mut batch = Vec::new();
        let mut deleted = 0;
        for _ in 0..1 + rng.below(3) {
            let key = present[rng.below(present.len())].clone();
            if let Some(row) = after.rows.remove(&key) {
                after.changed_at.remove(&key);
                after.wrote(&key, step, None);
                gone.push(row.clone());
                batch.push(row);
                deleted += 1;
                tally.deleted += 1;
            }
        }
        *serial += 1;
        batch.push(t.new_row(rng, *serial, None));
        return Step {
            operation: Operation::Delete,
            batch,
            expect_inserted: 0,
            expect_updated: 0,
            expect_deleted: deleted,
            after,
        };
    }
    if roll < 35 {
        // Insert keys no row has.
        let mut batch = Vec::new();
        for _ in 0..1 + rng.below(4) {
            *serial += 1;
            let partition = new_partitions.filter(|_| rng.chance(25));
            let mut row = t.new_row(rng, *serial, partition);
            row.insert(t.edit.clone(), Value::from(format!("ins-{step}")));
            tally.inserted_by_insert += 1;
            tally.new_partition_rows += partition.is_some() as usize;
            after.rows.insert(t.key(&row), row.clone());
            after.changed_at.insert(t.key(&row), step);
            after.wrote(&t.key(&row), step, Some(row.clone()));
            batch.push(row);
        }
        let n = batch.len() as u64;
        return Step {
            operation: Operation::Insert,
            batch,
            expect_inserted: n,
            expect_updated: 0,
            expect_deleted: 0,
            after,
        };
    }
    // Upsert: updates that win, tie or lose on ordering; new keys; returning keys; a key
    // given twice (the higher ordering value wins inside the batch).
    let mut batch: Vec<Map<String, Value>> = Vec::new();
    for i in 0..1 + rng.below(5) {
        let Some(key) = present.get(rng.below(present.len().max(1))) else {
            break;
        };
        if batch.iter().any(|r| t.key(r) == **key) {
            continue; // twins come below, never with equal ordering values
        }
        let mut row = model.rows[*key].clone();
        let edited = match rng.chance(15) {
            true => Value::Null,
            false => Value::from(format!("upd-{step}-{i}")),
        };
        row.insert(t.edit.clone(), edited);
        let stored = t.order(&row);
        let order = match rng.below(4) {
            0 => stored - 1 - rng.below(3) as i64, // loses to the stored row
            1 => stored,                           // a tie: the later write wins
            _ => stored + 1 + rng.below(5) as i64,
        };
        t.with_order(&mut row, order);
        batch.push(row);
    }
    for _ in 0..rng.below(3) {
        *serial += 1;
        let partition = new_partitions.filter(|_| rng.chance(20));
        let mut row = t.new_row(rng, *serial, partition);
        row.insert(t.edit.clone(), Value::from(format!("new-{step}")));
        tally.new_keys += 1;
        tally.new_partition_rows += partition.is_some() as usize;
        batch.push(row);
    }
    if !gone.is_empty() && rng.chance(50) {
        // A deleted key back, sometimes ordered below the row it had.
        let mut row = gone.swap_remove(rng.below(gone.len()));
        row.insert(t.edit.clone(), Value::from(format!("back-{step}")));
        let order = t.order(&row) + if rng.chance(50) { -3 } else { 2 };
        tally.returned_keys += 1;
        t.with_order(&mut row, order);
        batch.push(row);
    }
    if t.ordering.is_some() && !batch.is_empty() && rng.chance(40) {
        // The same key twice in the batch, with a different ordering value.
        let mut twin = batch[rng.below(batch.len())].clone();
        let order = t.order(&twin);
        twin.insert(t.edit.clone(), Value::from(format!("twin-{step}")));
        t.with_order(&mut twin, order + if rng.chance(50) { 7 } else { -7 });
        tally.twins += 1;
        batch.push(twin);
    }
    let mut batch_winner: BTreeMap<String, Map<String, Value>> = BTreeMap::new();
    for row in &batch {
        let key = t.key(row);
        if batch_winner
            .get(&key)
            .is_none_or(|held| t.order(row) > t.order(held))
        {
            batch_winner.insert(key, row.clone());
        }
    }
    let (mut inserted, mut updated) = (0, 0);
    for (key, row) in batch_winner {
        after.wrote(&key, step, Some(row.clone()));
        match model.rows.get(&key) {
            Some(stored) => {
                updated += 1;
                let (new, old) = (t.order(&row), t.order(stored));
                match new.cmp(&old) {
                    std::cmp::Ordering::Greater => tally.updates_won += 1,
                    std::cmp::Ordering::Equal => tally.updates_tied += 1,
                    std::cmp::Ordering::Less => tally.updates_lost += 1,
                }
                // Event-time ordering: a lower ordering value than the stored row's loses.
                if t.ordering.is_none() || new >= old {
                    after.rows.insert(key.clone(), row);
                    after.changed_at.insert(key, step);
                }
            }
            None => {
                inserted += 1;
                after.rows.insert(key.clone(), row);
                after.changed_at.insert(key, step);
            }
        }
    }
    Step {
        operation: Operation::Upsert,
        batch,
        expect_inserted: inserted,
        expect_updated: updated,
        expect_deleted: 0,
        after,
    }
}

/// Reads with filters, through the metadata table's indexes where the table has them
/// (record index, column and partition stats, which this writer keeps), against the model
/// filtered alike: pruning must never drop a row a commit wrote, moved or nulled.
async fn filtered_reads(
    t: &Table<'_>,
    rng: &mut Rng,
    model: &Model,
    fixture: &Fixture,
    what: &str,
) {
    type Test = Box<dyn Fn(&Map<String, Value>) -> bool>;
    let rows: Vec<&Map<String, Value>> = model.rows.values().collect();
    let pick = |rng: &mut Rng| rows[rng.below(rows.len())].clone();
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let mut cases: Vec<(Vec<String>, Test)> = Vec::new();
    // One key, as an edge job looks a record up. Not one Spark left in two file groups:
    // the record index holds one of them, and data skipping reads that one, as Spark's does.
    let unfrozen: Vec<_> = rows
        .iter()
        .filter(|r| !t.frozen.contains(&key_of(&t.keys, r)))
        .collect();
    let row = unfrozen[rng.below(unfrozen.len())];
    let (field, value) = (t.keys[0].clone(), row[&t.keys[0]].clone());
    cases.push((
        vec![format!("{field} = {}", text(&value))],
        Box::new(move |r| r.get(&field) == Some(&value)),
    ));
    if let Some(o) = t.ordering.clone() {
        // A range of the ordering field around a row's value.
        let at = t.order(&pick(rng));
        let (low, high) = (at - rng.below(4) as i64, at + 1 + rng.below(4) as i64);
        cases.push((
            vec![format!("{o} >= {low}"), format!("{o} < {high}")],
            Box::new(move |r| {
                r.get(&o)
                    .and_then(Value::as_i64)
                    .is_some_and(|v| v >= low && v < high)
            }),
        ));
    }
    // The edited column: a value a commit wrote, or null.
    let edit = t.edit.clone();
    match pick(rng).get(&edit).cloned() {
        Some(Value::String(s)) => cases.push((
            vec![format!("{edit} = {s}")],
            Box::new(move |r| r.get(&edit) == Some(&Value::String(s.clone()))),
        )),
        _ => cases.push((
            vec![format!("{edit} is null")],
            Box::new(move |r| r.get(&edit).is_none_or(Value::is_null)),
        )),
    }
    if let Some(p) = fixture.new_partitions {
        let value = pick(rng)[p].clone();
        let p = p.to_string();
        cases.push((
            vec![format!("{p} = {}", text(&value))],
            Box::new(move |r| r.get(&p) == Some(&value)),
        ));
    }
    for (filters, test) in cases {
        let parsed = filters
            .iter()
            .map(|f| hudi_edge::expr::parse_filter(f).expect("filter"))
            .collect();
        let got = our_rows(
            t.dir,
            ReadOptions {
                filters: parsed,
                ..ReadOptions::default()
            },
        )
        .await;
        let mut want = model.clone();
        want.rows.retain(|_, r| test(r));
        same_rows(
            &data_only(&got),
            &model_data(t.dir, &want).await,
            &format!("{what}: read with {filters:?}"),
        );
    }
}

async fn rows_as_of(dir: &Path, instant: &str) -> Vec<String> {
    let as_of = ReadOptions {
        as_of: Some(instant.to_string()),
        ..ReadOptions::default()
    };
    our_rows(dir, as_of).await
}

async fn model_data(dir: &Path, model: &Model) -> Vec<String> {
    let rows: Vec<Map<String, Value>> = model.rows.values().cloned().collect();
    data_only(&model_rows(dir, &rows).await)
}

async fn run_sequence(fixture: &Fixture, seed: u64, steps: usize) {
    let test = format!("{}-seed{seed}", fixture.test);
    let dir = common::table_copy(fixture.name, "write-seq", &test);
    let table = open(&dir).await;
    let config = table.config().clone();
    let start_rows = input_rows(&dir).await;
    let keys = config.record_key_fields.clone();
    let merge_on_read = config.table_type == hudi_edge::config::TableType::MergeOnRead;
    let model_key: Vec<String> = keys
        .iter()
        .chain(&config.partition_fields)
        .cloned()
        .collect();
    let mut held = BTreeMap::new();
    for r in &start_rows {
        *held.entry(key_of(&keys, r)).or_insert(0) += 1;
    }
    let frozen: Vec<String> = held
        .into_iter()
        .filter(|(_, n)| *n > 1)
        .map(|(k, _)| k)
        .collect();
    let mut model = Model::default();
    for (i, r) in start_rows.iter().enumerate() {
        let key = match frozen.contains(&key_of(&keys, r)) {
            true => format!("frozen-{i}"),
            false => key_of(&model_key, r),
        };
        model.rows.insert(key, r.clone());
    }
    assert_eq!(model.rows.len(), start_rows.len(), "{}", fixture.name);
    let t = Table {
        dir: &dir,
        model_key,
        frozen,
        edit: editable(&table, &start_rows[0])
            .await
            .expect("a string column to edit"),
        keys,
        ordering: config.ordering_fields.first().cloned(),
        templates: start_rows.clone(),
    };
    drop(table);
    let what = |step: usize| format!("{} seed {seed} step {step}", fixture.name);

    let mut rng = Rng(seed);
    let mut carried = Carried {
        gone: Vec::new(),
        serial: seed * 1000,
        tally: Tally::default(),
    };
    // (instant, completion time, model after it) of every commit.
    let mut commits: Vec<(String, String, Model)> = Vec::new();
    for step in 0..steps {
        let planned = plan_step(
            &t,
            &mut rng,
            &model,
            &mut carried,
            step,
            fixture.new_partitions,
        );
        // Merge-On-Read incremental reads are modelled on log files (tests/write_compaction.rs
        // has compaction); cleaning off: every commit is read back by time travel.
        let settings: Vec<(&str, &str)> = (NO_INLINE_COMPACTION.iter().copied())
            .chain([("hoodie.clean.automatic", "false")])
            .collect();
        let result = write_with(t.dir, &planned.batch, planned.operation, &settings).await;
        let r = &result.records;
        assert_eq!(
            (r.inserted, r.updated, r.deleted),
            (
                planned.expect_inserted,
                planned.expect_updated,
                planned.expect_deleted
            ),
            "{}: counts of {:?} {:?}",
            what(step),
            planned.operation,
            result.records
        );
        carried.tally.metadata_table_compactions +=
            result.metadata_table.compaction.is_some() as usize;
        model = planned.after;
        let ours = data_only(&our_rows(t.dir, ReadOptions::default()).await);
        same_rows(
            &ours,
            &model_data(t.dir, &model).await,
            &format!("{}: snapshot after {:?}", what(step), planned.operation),
        );
        filtered_reads(&t, &mut rng, &model, fixture, &what(step)).await;
        commits.push((result.instant, result.completion_time, model.clone()));
    }

    // Every commit reads back by time travel.
    for (i, (instant, _, then)) in commits.iter().enumerate() {
        let old = rows_as_of(t.dir, instant).await;
        same_rows(
            &data_only(&old),
            &model_data(t.dir, then).await,
            &format!("{}: time travel to {instant}", what(i)),
        );
    }
    // Incremental from three points: rows whose last effective write came after. A table
    // without meta fields has no commit time per row: Hudi refuses the query there.
    let properties = std::fs::read_to_string(t.dir.join(".hoodie/hoodie.properties")).unwrap();
    let with_meta_fields = !properties.contains("hoodie.populate.meta.fields=false");
    for from in [0, steps / 3, steps - 2]
        .into_iter()
        .filter(|_| with_meta_fields)
    {
        let (_, completion, _) = &commits[from];
        let changed = our_rows(
            t.dir,
            ReadOptions {
                query: QueryType::Incremental,
                start: Some(completion.clone()),
                ..ReadOptions::default()
            },
        )
        .await;
        let since = model.changed_after(from, &t, merge_on_read);
        let last_writes = model.changed_after(from, &t, false);
        carried.tally.incremental_merge_on_read_differs +=
            (since.rows != last_writes.rows) as usize;
        same_rows(
            &data_only(&changed),
            &model_data(t.dir, &since).await,
            &format!("{}: incremental after {completion}", what(from)),
        );
    }
    // hudi-rs: the last snapshot and a time travel to the middle.
    let ours = our_rows(t.dir, ReadOptions::default()).await;
    same_rows(
        &hudi_rs_rows(t.dir, &[]),
        &ours,
        &format!("{} seed {seed}: hudi-rs snapshot", fixture.name),
    );
    let (mid, _, _) = &commits[steps / 2];
    let ours_mid = rows_as_of(t.dir, mid).await;
    same_rows(
        &hudi_rs_rows(t.dir, &["--as-of", mid]),
        &ours_mid,
        &format!("{} seed {seed}: hudi-rs time travel to {mid}", fixture.name),
    );
    let tally = &carried.tally;
    eprintln!("{} seed {seed}: {tally:?}", fixture.name);
    if fixture.metadata_table {
        assert!(
            tally.metadata_table_compactions > 0,
            "{} seed {seed}: no metadata-table compaction in {steps} commits",
            fixture.name
        );
    }
}

/// Commits per sequence: enough to cross a metadata-table compaction (every 10 delta
/// commits) twice; `HUDI_EDGE_SEQ_STEPS` for longer ones.
fn steps() -> usize {
    std::env::var("HUDI_EDGE_SEQ_STEPS")
        .map(|s| s.parse().expect("HUDI_EDGE_SEQ_STEPS: a number"))
        .unwrap_or(14)
}

fn seeds(default: &[u64]) -> Vec<u64> {
    let Ok(given) = std::env::var("HUDI_EDGE_SEQ_SEED") else {
        return default.to_vec();
    };
    let number = |s: &str| -> u64 { s.parse().expect("HUDI_EDGE_SEQ_SEED: N or A..B") };
    match given.split_once("..") {
        Some((a, b)) => (number(a)..number(b)).collect(),
        None => vec![number(&given)],
    }
}

macro_rules! sequences {
    ($($name:ident => $fixture:literal, $new_partitions:expr, $mdt:expr, $seeds:expr);* $(;)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() {
                let fixture = Fixture {
                    test: stringify!($name),
                    name: $fixture,
                    new_partitions: $new_partitions,
                    metadata_table: $mdt,
                };
                for seed in seeds(&$seeds) {
                    run_sequence(&fixture, seed, steps()).await;
                }
            }
        )*
    };
}

sequences! {
    cow_mdt_full => "sample_table/cow/v9_txns_simple_overwrite", Some("region"), true, [1, 2];
    mor_mdt_date_string => "sample_table/mor/avro/v9_timebasedkeygen_nonhivestyle", None, true, [3, 4];
    mor_nometa_complex => "sample_table/mor/avro/v9_txns_complex_nometa", Some("region"), false, [5];
    cow_v8_int_partition => "sample_table/cow/v8_simplekeygen_nonhivestyle", Some("byteField"), false, [6];
    cow_no_meta_fields_mdt => "spark_variants/spark_v9_no_meta_fields_cow", Some("part"), true, [7];
    mor_no_meta_fields_mdt => "spark_variants/spark_v9_no_meta_fields_mor", Some("part"), true, [8];
}
