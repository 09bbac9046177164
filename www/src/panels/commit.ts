// One instant in detail: what it wrote (files, records, bytes, partitions), what it replaced,
// the writer's schema, and the metadata as Hudi stored it.

import type { CommitDetail, HudiError, MetadataTableFile, SchemaField } from 'hudi-edge';
import { actionColor, laneOf } from '../colors';
import { h } from '../dom';
import { bytes, count, instantLabel, instantMillis, ms, plural } from '../format';

const stat = (label: string, value: string, cls = '') => h('div', { class: `stat ${cls}` }, h('div', { class: 'stat-value' }, value), h('div', { class: 'stat-label' }, label));

function fileName(path: string) {
  return path.split('/').at(-1) ?? path;
}

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (v && typeof v === 'object' ? (v as Json) : {});
const num = (v: unknown) => (typeof v === 'number' ? v : Number(v) || 0);

/** What a table service did, from the instant's metadata: a clean's deleted files, a
 *  rollback's, a compaction's merged log files, a clustering's rewritten file groups. Null
 *  for writes. */
function serviceView(d: CommitDetail): HTMLElement | null {
  const raw = obj(d.raw);
  if (d.instant.action === 'clean' || d.instant.action === 'rollback') {
    const parts = Object.entries(obj(raw.partitionMetadata));
    const deleted = parts.flatMap(([p, m]) => {
      const files = obj(m).successDeleteFiles;
      return (Array.isArray(files) ? files : []).map((f) => [p, String(f)] as const);
    });
    const retained = d.instant.action === 'clean' ? String(raw.earliestCommitToRetain ?? '') : '';
    const undone = Array.isArray(raw.commitsRollback) ? (raw.commitsRollback as unknown[]).map(String) : [];
    return h('div', { class: 'service', 'data-testid': 'service-detail' },
      h('div', { class: 'stats' },
        stat('files deleted', count(num(raw.totalFilesDeleted))),
        stat('partitions', count(parts.length)),
        retained ? stat('earliest commit kept', retained) : null,
        undone.length ? stat('instants rolled back', undone.join(', ')) : null),
      deleted.length
        ? h('details', null, h('summary', null, `Deleted files (${deleted.length})`),
            h('table', { class: 'grid-table files' }, h('tbody', null, deleted.map(([p, f]) =>
              h('tr', null, h('td', null, h('code', null, p || '(root)')), h('td', null, h('code', null, fileName(f))))))))
        : null);
  }
  if (d.operation === 'COMPACT' || d.operation === 'LOG_COMPACT') {
    const stats = Object.values(obj(raw.partitionToWriteStats)).flatMap((v) => (Array.isArray(v) ? v : []));
    const logs = stats.reduce((n, st) => n + num(obj(st).totalLogFilesCompacted), 0);
    const records = stats.reduce((n, st) => n + num(obj(st).totalLogRecords), 0);
    return h('div', { class: 'service', 'data-testid': 'service-detail' },
      h('div', { class: 'stats' },
        stat('file groups compacted', count(stats.length)),
        stat('log files merged', count(logs)),
        stat('log records merged', count(records))));
  }
  if (d.operation === 'CLUSTER') {
    const stats = Object.values(obj(raw.partitionToWriteStats)).flatMap((v) => (Array.isArray(v) ? v : []));
    const records = stats.reduce((n, st) => n + num(obj(st).numWrites), 0);
    return h('div', { class: 'service', 'data-testid': 'service-detail' },
      h('div', { class: 'stats' },
        stat('file groups clustered', count(d.replacedFileGroups.length)),
        stat('new file groups', count(stats.length)),
        stat('records rewritten', count(records))));
  }
  return null;
}

export function commitView(d: CommitDetail, onClose: () => void): HTMLElement {
  const i = d.instant;
  const start = instantMillis(i.requestedTime);
  const end = instantMillis(i.completionTime);
  const took = start !== null && end !== null && end >= start && end - start < 86_400_000 ? ms(end - start) : null;
  const isWrite = d.files.length > 0 || d.replacedFileGroups.length > 0;
  const logs = d.files.filter((f) => f.kind === 'log').length;

  const files = d.files.length
    ? h('table', { class: 'grid-table files' },
        h('thead', null, h('tr', null, ...['partition', 'file', 'kind', 'size', 'inserts', 'updates', 'deletes', 'previous commit'].map((c) => h('th', null, c)))),
        h('tbody', null,
          d.files.map((f) =>
            h('tr', null,
              h('td', null, h('code', null, f.partition || '(root)')),
              h('td', { title: f.path }, h('code', null, fileName(f.path))),
              h('td', null, h('span', { class: `kind kind-${f.kind}` }, f.kind)),
              h('td', { class: 'num' }, bytes(f.bytes)),
              h('td', { class: 'num' }, count(f.inserted)),
              h('td', { class: 'num' }, count(f.updated)),
              h('td', { class: 'num' }, count(f.deleted)),
              h('td', null, f.prevCommit ? h('code', null, f.prevCommit) : h('span', { class: 'muted' }, '–')),
            ))))
    : null;

  return h(
    'section',
    { class: 'card commit', 'data-testid': 'commit-detail', 'data-requested-time': i.requestedTime },
    h('header', { class: 'card-head' },
      h('h3', null,
        h('span', { class: 'action-chip big', style: `--c:${actionColor(laneOf(i))}` }, i.action),
        h('code', null, i.requestedTime),
        d.operation ? h('span', { class: 'op' }, d.operation) : null,
        h('span', { class: `state state-${i.state}` }, i.state),
        i.archived ? h('span', { class: 'pill' }, 'archived') : null),
      h('button', { type: 'button', class: 'icon', title: 'Close', onclick: onClose }, '×')),
    h('p', { class: 'muted' },
      `requested ${instantLabel(i.requestedTime)}`,
      i.completionTime ? ` · completed ${instantLabel(i.completionTime)}` : '',
      took ? ` · took ${took}` : '',
      i.file ? h('span', null, ' · ', h('code', null, i.file)) : null),
    isWrite
      ? h('div', { class: 'stats' },
          stat('inserts', count(d.inserted)),
          stat('updates', count(d.updated)),
          stat('deletes', count(d.deleted)),
          stat('records written', count(d.writes)),
          stat('bytes written', bytes(d.bytes)),
          stat('files', `${count(d.files.length - logs)} base · ${count(logs)} log`),
          stat('partitions', count(d.partitions.length)),
          d.replacedFileGroups.length ? stat('file groups replaced', count(d.replacedFileGroups.length), 'warn') : null)
      : null,
    serviceView(d),
    files,
    d.replacedFileGroups.length
      ? h('div', null, h('h4', null, `Replaced file groups (${d.replacedFileGroups.length})`),
          h('ul', { class: 'chips' }, d.replacedFileGroups.map((r) => h('li', null, h('code', null, `${r.partition ? `${r.partition}/` : ''}${r.fileId}`)))))
      : null,
    d.schema
      ? h('details', { class: 'schema' }, h('summary', null, `Schema (${plural(d.schema.length, 'field')})`),
          h('table', { class: 'grid-table' }, h('tbody', null, d.schema.map((f) => h('tr', null, h('td', null, h('code', null, f.name)), h('td', null, f.type), h('td', { class: 'muted' }, f.nullable ? 'nullable' : 'required'))))))
      : null,
    h('details', { class: 'raw' }, h('summary', null, 'Metadata as stored'), h('pre', null, JSON.stringify(d.raw, null, 2))),
  );
}

export function errorView(e: unknown, what: string): HTMLElement {
  const err = e as Partial<HudiError> & { message?: string };
  return h('div', { class: 'error-box', role: 'alert', 'data-testid': 'error' },
    h('div', { class: 'error-head' }, h('span', { class: 'code' }, err.code ?? 'ERROR'), what),
    h('div', null, err.message ?? String(e)),
    err.object ? h('div', { class: 'muted' }, 'object: ', h('code', null, err.object)) : null);
}

/** The metadata-table files an instant wrote (its delta commit of the same time), by partition. */
export function metadataTableView(files: MetadataTableFile[]): HTMLElement {
  const byPartition = new Map<string, MetadataTableFile[]>();
  for (const f of files) byPartition.set(f.partition, [...(byPartition.get(f.partition) ?? []), f]);
  return h('div', { class: 'mdt-touched', 'data-testid': 'mdt-partitions' },
    h('h4', null, `Metadata table (${plural(byPartition.size, 'partition')})`),
    byPartition.size
      ? h('ul', { class: 'chips' }, [...byPartition].map(([p, fs]) =>
          h('li', { 'data-partition': p, title: fs.map((f) => f.path).join('\n') }, h('code', null, p), h('span', { class: 'muted' }, ` ${plural(fs.length, 'file')} · ${bytes(fs.reduce((n, f) => n + f.size, 0))}`))))
      : h('p', { class: 'muted' }, 'no metadata-table files carry this instant'));
}

/** How the writer's schema differs from the previous write's (meta columns aside): columns
 *  added, dropped or retyped; null when they agree. */
export function schemaChangeView(before: CommitDetail, after: CommitDetail): HTMLElement | null {
  const data = (fields: SchemaField[] | null) => new Map((fields ?? []).filter((f) => !f.name.startsWith('_hoodie_')).map((f) => [f.name, f]));
  const [old, now] = [data(before.schema), data(after.schema)];
  const changes: [string, string, string][] = [];
  for (const [name, f] of now) {
    const was = old.get(name);
    if (!was) changes.push(['added', `+ ${name}`, f.type]);
    else if (was.type !== f.type) changes.push(['retyped', `~ ${name}`, `${was.type} → ${f.type}`]);
  }
  for (const [name, f] of old) if (!now.has(name)) changes.push(['dropped', `− ${name}`, f.type]);
  if (!changes.length) return null;
  return h('div', { class: 'schema-change', 'data-testid': 'schema-change' },
    h('h4', null, 'Schema changed since ', h('code', null, before.instant.requestedTime)),
    h('ul', { class: 'chips' }, changes.map(([kind, label, type]) =>
      h('li', { 'data-change': kind }, h('code', null, label), h('span', { class: 'muted' }, ` ${type}`)))));
}
