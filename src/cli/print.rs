//! What the command line prints: JSON answers, the timeline as a table, rows in the
//! `--format`s, a write's summary.

use std::io::Write;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;

use crate::api::output;
use crate::api::wire;
use crate::error::{HudiError, Result};
use crate::read::Scan;
use crate::timeline::Timeline;
use crate::write::WriteResult;

use super::args::Format;

fn stdout_error(e: impl std::fmt::Display) -> HudiError {
    HudiError::io("<stdout>", e)
}

/// Standard output without its line buffering (a duplicate of the descriptor).
#[cfg(unix)]
fn raw_stdout() -> Result<Box<dyn Write>> {
    use std::os::fd::AsFd;
    let fd = std::io::stdout()
        .as_fd()
        .try_clone_to_owned()
        .map_err(stdout_error)?;
    Ok(Box::new(std::fs::File::from(fd)))
}

#[cfg(not(unix))]
fn raw_stdout() -> Result<Box<dyn Write>> {
    Ok(Box::new(std::io::stdout()))
}

pub(super) fn json(value: &impl serde::Serialize) -> Result<()> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value).map_err(stdout_error)?;
    writeln!(out).map_err(stdout_error)
}

/// `bytes` and a newline on standard output.
pub(super) fn bytes(bytes: &[u8]) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes).map_err(stdout_error)?;
    writeln!(out).map_err(stdout_error)
}

/// The instants, as JSON or as a table.
pub(super) fn timeline(table: &str, timeline: &Timeline, as_json: bool) -> Result<()> {
    if as_json {
        return json(&wire::Timeline {
            table: table.to_string(),
            instants: timeline.instants.iter().map(wire::Instant::from).collect(),
        });
    }
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{:<17}  {:<17}  {:<13}  {:<10}  note",
        "requested", "completed", "action", "state"
    )
    .map_err(stdout_error)?;
    for i in &timeline.instants {
        let note = match (&i.plan_action, i.archived) {
            (Some(p), _) => format!("requested as {p}"),
            (None, true) => "archived".to_string(),
            _ => String::new(),
        };
        writeln!(
            out,
            "{:<17}  {:<17}  {:<13}  {:<10}  {}",
            i.requested_time,
            i.completion_time.as_deref().unwrap_or("-"),
            i.action,
            i.state.as_str(),
            note
        )
        .map_err(stdout_error)?;
    }
    Ok(())
}

/// The scan's rows in `format`; how many.
pub(super) async fn rows(scan: &mut Scan, format: Format) -> Result<usize> {
    let schema = scan.schema();
    let mut rows = 0;
    if format == Format::Arrow {
        // Each batch is written as it arrives (decoding goes on meanwhile), straight to
        // the descriptor: stdout's line buffering would scan the binary for newlines.
        let mut out = std::io::BufWriter::with_capacity(1 << 20, raw_stdout()?);
        let mut ipc = output::ArrowIpcWriter::new(&schema, &mut out)?;
        while let Some(b) = scan.next().await {
            let b = b?;
            rows += b.num_rows();
            ipc.write(&b)?;
        }
        ipc.finish()?;
        out.flush().map_err(stdout_error)?;
        return Ok(rows);
    }
    let mut batches = Vec::new();
    while let Some(b) = scan.next().await {
        batches.push(b?);
    }
    rows = batches.iter().map(|b| b.num_rows()).sum();
    self::batches(&schema, &batches, format)?;
    Ok(rows)
}

/// Rows already read, in `format`.
pub(super) fn batches(schema: &SchemaRef, batches: &[RecordBatch], format: Format) -> Result<()> {
    if format == Format::Arrow {
        let mut out = std::io::BufWriter::with_capacity(1 << 20, raw_stdout()?);
        let mut ipc = output::ArrowIpcWriter::new(schema, &mut out)?;
        for b in batches {
            ipc.write(b)?;
        }
        ipc.finish()?;
        return out.flush().map_err(stdout_error);
    }
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    match format {
        Format::Jsonl => output::write_jsonl(batches, &mut out)?,
        Format::OracleJsonl => {
            for b in batches {
                for row in output::rows_as_json_with(b, output::JsonStyle::ORACLE) {
                    serde_json::to_writer(&mut out, &row).map_err(stdout_error)?;
                    writeln!(out).map_err(stdout_error)?;
                }
            }
        }
        Format::Csv => output::write_csv(schema, batches, &mut out)?,
        Format::Table => table(schema, batches, &mut out)?,
        Format::Arrow => unreachable!("written above"),
    }
    out.flush().map_err(stdout_error)
}

/// A text table: a header, a rule, then one line a row, columns padded to their widest cell.
fn table(schema: &SchemaRef, batches: &[RecordBatch], out: &mut dyn Write) -> Result<()> {
    let cell = |v: serde_json::Value| match v {
        serde_json::Value::Null => "NULL".to_string(),
        serde_json::Value::String(s) => s,
        other => other.to_string(),
    };
    let mut lines: Vec<Vec<String>> =
        vec![schema.fields().iter().map(|f| f.name().clone()).collect()];
    for b in batches {
        for row in 0..b.num_rows() {
            lines.push(
                (b.columns().iter())
                    .map(|c| cell(output::value_json(c.as_ref(), row)))
                    .collect(),
            );
        }
    }
    let mut widths = vec![0; schema.fields().len()];
    for line in &lines {
        for (w, c) in widths.iter_mut().zip(line) {
            *w = (*w).max(c.chars().count());
        }
    }
    let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    let rows = lines.len() - 1;
    lines.insert(1, rule);
    for line in lines {
        let padded: Vec<String> = (line.iter().zip(&widths))
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        writeln!(out, "{}", padded.join(" | ").trim_end()).map_err(stdout_error)?;
    }
    writeln!(out, "({rows} row{})", if rows == 1 { "" } else { "s" }).map_err(stdout_error)
}

/// What a write committed: as JSON, or one line.
pub(super) fn write_result(result: &WriteResult, as_json: bool) -> Result<()> {
    if as_json {
        return json(result);
    }
    println!(
        "{} {} {}: {} inserted, {} updated, {} deleted ({} deletes of missing keys), {} files",
        result.action,
        result.instant,
        result.completion_time,
        result.records.inserted,
        result.records.updated,
        result.records.deleted,
        result.records.delete_missing,
        result.files_written.len()
    );
    cleans(&result.services.clean, false)?;
    if let Some(c) = &result.services.compaction {
        compaction(c);
    }
    if let Some(c) = &result.services.clustering {
        clustering(c);
    }
    for e in &result.services.errors {
        eprintln!(
            "warning: {} {} committed, but the {} after it failed ({}): {}",
            result.action, result.instant, e.service, e.code, e.message
        );
    }
    Ok(())
}

/// Cleans that ran: JSON, or a line each.
pub(super) fn cleans(done: &[crate::write::services::clean::Clean], as_json: bool) -> Result<()> {
    if as_json {
        return json(&done);
    }
    for c in done {
        println!(
            "clean {} {} ({} table{}): {} files deleted ({} already gone), {} bytes freed in {} partitions, retaining from {}; {} requests, {} ms",
            c.instant,
            c.completion_time,
            c.table,
            if c.resumed { ", finished a pending clean" } else { "" },
            c.files_deleted,
            c.files_missing,
            c.bytes_freed,
            c.partitions,
            if c.earliest_commit_to_retain.is_empty() { "-" } else { &c.earliest_commit_to_retain },
            c.io.requests,
            c.elapsed_ms
        );
    }
    Ok(())
}

/// What a clustering run did, one line each.
pub(super) fn clustering(report: &crate::write::ClusteringReport) {
    for c in &report.completed {
        println!(
            "clustering {} {}: {} groups, {} file groups ({} bytes) into {} base files ({} records, {} bytes){}; {} requests, {} ms",
            c.instant,
            c.completion_time,
            c.groups,
            c.file_groups_replaced.len(),
            c.bytes_replaced,
            c.files_written.len(),
            c.records_written,
            c.bytes_written,
            if c.scheduled_here { "" } else { "; a pending plan" },
            c.io.requests,
            c.elapsed_ms
        );
    }
    if let Some(t) = &report.scheduled {
        println!("clustering {t} scheduled (hudi-edge cluster TABLE --instant {t} executes it)");
    }
}

/// What a compaction run did, one line each.
pub(super) fn compaction(report: &crate::write::CompactionReport) {
    for c in &report.completed {
        println!(
            "compaction {} {}: {} file groups, {} log files into {} base files ({} records, {} bytes){}; {} requests, {} ms",
            c.instant,
            c.completion_time,
            c.file_groups,
            c.log_files,
            c.files_written.len(),
            c.records_written,
            c.bytes_written,
            if c.scheduled_here { "" } else { "; a pending plan" },
            c.io.requests,
            c.elapsed_ms
        );
    }
    if let Some(t) = &report.scheduled {
        println!("compaction {t} scheduled (hudi-edge compact TABLE --instant {t} executes it)");
    }
}

/// A health report: JSON, or the numbers and findings in lines.
pub(super) fn health(h: &wire::Health, as_json: bool) -> Result<()> {
    if as_json {
        return json(h);
    }
    let mut out = std::io::stdout().lock();
    let mut line = |s: String| writeln!(out, "{s}").map_err(stdout_error);
    line(format!(
        "{} ({}, table version {}) at {}",
        h.table, h.table_type, h.version, h.location
    ))?;
    line(format!(
        "files: {} partitions, {} file groups, {} base files ({} bytes), {} small (< {} bytes, {:.0}%)",
        h.partitions,
        h.file_groups,
        h.base_files,
        h.base_bytes,
        h.small_base_files,
        h.small_file_limit,
        h.small_base_share * 100.0
    ))?;
    line(format!(
        "logs: {} log files ({} bytes) in {} slices, at most {} per slice (p50 {})",
        h.log_files,
        h.log_bytes,
        h.slices_with_logs,
        h.max_log_files_per_slice,
        h.p50_log_files_per_slice
    ))?;
    if let Some(c) = &h.compaction {
        line(format!(
            "compaction: {} delta commits since the last (trigger {}), {}, {} pending",
            c.delta_commits_since_compaction,
            c.max_delta_commits,
            if c.due {
                "due".to_string()
            } else {
                format!("not due: {}", c.reason.as_deref().unwrap_or(""))
            },
            c.pending.len()
        ))?;
    }
    line(format!(
        "timeline: {} active instants, {} pending, {} failed writes, {} rollbacks",
        h.active_timeline_instants,
        h.pending_instants.len(),
        h.failed_writes,
        h.rollbacks
    ))?;
    line(format!(
        "clean: {} (last {}), {} files / {} bytes beyond retention{}",
        h.clean.policy,
        h.clean.last_clean.as_deref().unwrap_or("never"),
        h.clean.files_beyond_retention,
        h.clean.bytes_beyond_retention,
        if h.clean.due { ", due" } else { "" }
    ))?;
    line(format!(
        "archival: {} active commits (keep {}..{}), {} to archive",
        h.archival.active_commits,
        h.archival.keep_min_commits,
        h.archival.keep_max_commits,
        h.archival.instants_to_archive
    ))?;
    if let Some(l) = &h.lock {
        line(format!(
            "lock: owner {}, {}",
            l.owner,
            if l.live {
                "held"
            } else if l.stale {
                "stale (never released)"
            } else {
                "released"
            }
        ))?;
    }
    let m = &h.metadata_table;
    line(format!(
        "metadata table: [{}] of [{}] configured, {} instants behind, {} log files",
        m.partitions.join(", "),
        m.configured.join(", "),
        m.lag_instants,
        m.log_files
    ))?;
    line(format!(
        "activity: {} commits last day, {} last week; {} inserted, {} updated, {} deleted, {} bytes",
        h.activity.commits_last_day,
        h.activity.commits_last_week,
        h.activity.rows_inserted,
        h.activity.rows_updated,
        h.activity.rows_deleted,
        h.activity.bytes_written
    ))?;
    if h.findings.is_empty() {
        line("findings: none".into())?;
    }
    for f in &h.findings {
        let severity = serde_json::to_value(f.severity).ok();
        line(format!(
            "{:<8} {}: {}\n         fix: {}",
            severity.as_ref().and_then(|v| v.as_str()).unwrap_or(""),
            f.code,
            f.message,
            f.fix
        ))?;
    }
    for n in &h.notes {
        line(format!("note: {n}"))?;
    }
    line(format!("{} requests", h.io.requests))
}

/// What `health --fix` ran.
pub(super) fn fixes(fixes: &[wire::FixOutcome]) -> Result<()> {
    let mut out = std::io::stdout().lock();
    if fixes.is_empty() {
        writeln!(out, "nothing to fix by a table service").map_err(stdout_error)?;
    }
    for f in fixes {
        let what = match &f.error {
            None => "done".to_string(),
            Some(e) => format!("failed: {e}"),
        };
        writeln!(out, "fix {} ({}): {what}", f.code, f.service).map_err(stdout_error)?;
    }
    Ok(())
}

/// The tables found under a location.
pub(super) fn discovery(d: &wire::Discovery, as_json: bool) -> Result<()> {
    if as_json {
        return json(d);
    }
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{:<40}  {:<24}  {:<15}  {:>3}  {:>12}  {:<17}  findings",
        "path", "name", "type", "ver", "bytes", "last commit"
    )
    .map_err(stdout_error)?;
    for t in &d.tables {
        let findings = match &t.error {
            Some(e) => format!("error: {e}"),
            None => t
                .severities
                .iter()
                .map(|(s, n)| format!("{n} {s}"))
                .collect::<Vec<_>>()
                .join(", "),
        };
        writeln!(
            out,
            "{:<40}  {:<24}  {:<15}  {:>3}  {:>12}  {:<17}  {}",
            if t.path.is_empty() { "." } else { &t.path },
            t.name,
            t.table_type,
            t.version,
            t.bytes.map_or("-".to_string(), |b| b.to_string()),
            t.last_commit.as_deref().unwrap_or("-"),
            findings
        )
        .map_err(stdout_error)?;
    }
    writeln!(
        out,
        "{} tables; {} listings, {} objects seen",
        d.tables.len(),
        d.listings,
        d.objects_seen
    )
    .map_err(stdout_error)?;
    for l in &d.limits {
        writeln!(out, "limit: {l}").map_err(stdout_error)?;
    }
    Ok(())
}
