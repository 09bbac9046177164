// The table at a glance: type and version, keys, partitions, file groups, sizes, metadata-table
// partitions, and what opening it cost.

import type { FileLayout, Instant, TableInfo, WriterState } from 'hudi-edge';
import { h } from '../dom';
import { bytes, count, instantLabel } from '../format';

const fact = (label: string, value: unknown) =>
  h('div', { class: 'fact' }, h('dt', null, label), h('dd', null, value === null || value === undefined || value === '' ? h('span', { class: 'muted' }, '–') : (value as Node | string)));

const list = (xs: string[]) => (xs.length ? xs.map((x) => h('code', { class: 'tag' }, x)) : h('span', { class: 'muted' }, 'none'));

/** The storage lock (holder, lease, held or expired) and the writers' heartbeats. */
function writersView(w: WriterState): HTMLElement {
  const lock = w.lock;
  const until = lock?.validUntil ? new Date(lock.validUntil).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z') : null;
  return h('div', { class: 'writers', 'data-testid': 'writers' },
    lock
      ? h('div', { 'data-testid': 'storage-lock', 'data-expired': String(lock.expired) },
          h('span', { class: `badge ${lock.expired ? 'muted' : 'warn'}` }, lock.expired ? 'lock expired' : 'lock held'),
          ' by ', h('code', { 'data-testid': 'lock-owner' }, lock.owner ?? '?'),
          until ? h('span', { class: 'muted' }, ` · valid until ${until}`) : null)
      : h('span', { class: 'muted' }, 'no storage lock'),
    w.heartbeats.length
      ? h('div', null, 'heartbeats: ', w.heartbeats.map((b) => h('code', { class: 'tag', 'data-testid': 'heartbeat', title: b.lastBeat ? `last beat ${new Date(b.lastBeat).toISOString()}` : '' }, b.instant)))
      : null);
}

export function overviewView(info: TableInfo, layout: FileLayout, instants: Instant[], location: string, writers: WriterState | null = null): HTMLElement {
  const completed = instants.filter((i) => i.state === 'completed');
  const pending = instants.filter((i) => i.state !== 'completed');
  const archived = instants.filter((i) => i.archived).length;
  const last = [...completed].reverse().find((i) => ['commit', 'deltacommit', 'replacecommit'].includes(i.action));
  let baseFiles = 0;
  let logFiles = 0;
  for (const p of layout.partitions) for (const g of p.fileGroups) {
    const latest = g.slices.at(-1);
    if (latest?.baseFile) baseFiles++;
    logFiles += latest?.logFiles.length ?? 0;
  }
  const mor = info.type === 'MERGE_ON_READ';
  return h(
    'section',
    { class: 'card overview', 'data-testid': 'overview' },
    h('header', { class: 'overview-head' },
      h('div', null,
        h('h2', null, info.name),
        h('div', { class: 'location', title: location }, location)),
      h('div', { class: 'badges' },
        h('span', { class: `badge ${mor ? 'mor' : 'cow'}`, 'data-testid': 'table-type' }, mor ? 'Merge-On-Read' : 'Copy-On-Write'),
        h('span', { class: 'badge version', 'data-testid': 'table-version' }, `table version ${info.version}`),
        h('span', { class: 'badge' }, info.baseFileFormat.toLowerCase()))),
    h('div', { class: 'kpis' },
      h('div', { class: 'kpi' }, h('b', null, count(info.partitionCount)), h('span', null, 'partitions')),
      h('div', { class: 'kpi' }, h('b', null, count(info.fileGroupCount)), h('span', null, 'file groups')),
      h('div', { class: 'kpi' }, h('b', null, bytes(info.totalBytes)), h('span', null, 'latest snapshot')),
      h('div', { class: 'kpi' }, h('b', null, count(baseFiles)), h('span', null, mor ? `base files · ${count(logFiles)} log` : 'base files')),
      h('div', { class: 'kpi' }, h('b', null, count(completed.length)), h('span', null, `completed instants${archived ? ` · ${count(archived)} archived` : ''}`)),
      h('div', { class: 'kpi' }, h('b', null, count(pending.length)), h('span', null, 'pending instants'))),
    h('dl', { class: 'facts' },
      fact('Record key', list(info.recordKeyFields)),
      fact('Partition fields', list(info.partitionFields)),
      fact('Ordering fields', list(info.orderingFields)),
      fact('Key generator', info.keyGenerator),
      fact('Merge mode', info.mergeMode),
      fact('Partition paths', info.partitionFields.length ? (info.hiveStylePartitioning ? 'hive style (field=value)' : 'values only') : 'not partitioned'),
      fact('Meta fields', info.populateMetaFields ? 'populated' : 'not populated'),
      fact('Timeline timezone', info.timezone),
      fact('Latest commit', last ? h('span', null, h('code', null, last.requestedTime), h('span', { class: 'muted' }, ` ${instantLabel(last.requestedTime)}`)) : null),
      fact('Metadata table', list(info.metadataPartitions)),
      info.metadataPartitionsInflight.length ? fact('Metadata (building)', list(info.metadataPartitionsInflight)) : null,
      writers && (writers.lock || writers.heartbeats.length) ? fact('Writers', writersView(writers)) : null),
    h('details', { class: 'props' },
      h('summary', null, `hoodie.properties (${Object.keys(info.properties).length})`),
      h('table', { class: 'grid-table' }, h('tbody', null, Object.entries(info.properties).map(([k, v]) => h('tr', null, h('td', null, h('code', null, k)), h('td', { class: 'wrap' }, v)))))),
  );
}
