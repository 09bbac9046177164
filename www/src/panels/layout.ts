// File layout: partitions × file groups, each tile a file group's latest slice (shade = size,
// cyan foot = its log files, dots = older slices), small files and pending compaction /
// clustering marked; a size histogram for skew; a tile opens the group's slices.

import type { FileGroup, FileLayout, Instant, PartitionLayout } from 'hudi-edge';
import { h, replace } from '../dom';
import { bytes, count, plural } from '../format';

export interface Pending {
  instant: Instant;
  kind: string;
  fileIds: Set<string>;
}

const DEFAULT_SMALL_FILE_LIMIT = 104_857_600; // hoodie.parquet.small.file.limit

function median(xs: number[]) {
  if (!xs.length) return 0;
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

function histogram(sizes: number[]): HTMLElement {
  if (!sizes.length) return h('div');
  const bins = new Map<number, number>();
  for (const size of sizes) {
    const b = Math.floor(Math.log2(Math.max(size, 1)));
    bins.set(b, (bins.get(b) ?? 0) + 1);
  }
  const lo = Math.min(...bins.keys());
  const hi = Math.max(...bins.keys());
  const most = Math.max(...bins.values());
  const bars = [];
  for (let b = lo; b <= hi; b++) {
    const n = bins.get(b) ?? 0;
    bars.push(h('div', { class: 'hbar', title: `${bytes(2 ** b)}–${bytes(2 ** (b + 1))}: ${plural(n, 'file')}` },
      h('div', { class: 'hbar-fill', style: `height:${(n / most) * 100}%` }),
      h('span', null, bytes(2 ** b))));
  }
  return h('div', { class: 'histogram' }, h('div', { class: 'hist-title' }, 'Latest slice sizes'), h('div', { class: 'hist-bars' }, bars));
}

export function layoutView(layout: FileLayout, properties: Record<string, string>, pending: Pending[]): HTMLElement {
  const smallLimit = Number(properties['hoodie.parquet.small.file.limit'] ?? DEFAULT_SMALL_FILE_LIMIT) || DEFAULT_SMALL_FILE_LIMIT;
  const groups = layout.partitions.flatMap((p) => p.fileGroups.map((g) => ({ p, g, latest: g.slices.at(-1)! })));
  const sizes = groups.map((x) => x.latest.size);
  const max = Math.max(1, ...sizes);
  const med = median(sizes);
  const small = groups.filter((x) => x.latest.baseFile && x.latest.baseFile.size < smallLimit).length;
  const logs = groups.reduce((n, x) => n + x.latest.logFiles.length, 0);
  const pendingOf = (fileId: string) => pending.filter((p) => p.fileIds.has(fileId));
  const detail = h('div', { class: 'group-detail' }, h('p', { class: 'muted' }, 'Select a file group to see its slices.'));

  const showGroup = (p: PartitionLayout, g: FileGroup, tile: HTMLElement) => {
    for (const t of tile.closest('.layout-grid')!.querySelectorAll('.tile.selected')) t.classList.remove('selected');
    tile.classList.add('selected');
    replace(
      detail,
      h('h4', null, 'File group ', h('code', null, g.fileId), p.partition ? h('span', { class: 'muted' }, ` in ${p.partition}`) : null),
      pendingOf(g.fileId).map((x) => h('p', { class: 'pending-note' }, `pending ${x.kind} `, h('code', null, x.instant.requestedTime), ' will rewrite this group')),
      h('table', { class: 'grid-table' },
        h('thead', null, h('tr', null, ...['slice (base instant)', 'base file', 'size', 'log files', 'slice size'].map((c) => h('th', null, c)))),
        h('tbody', null, [...g.slices].reverse().map((s, n) =>
          h('tr', { class: n === 0 ? 'latest' : '' },
            h('td', null, h('code', null, s.baseInstant), n === 0 ? h('span', { class: 'pill' }, 'latest') : null),
            h('td', null, s.baseFile ? h('code', { title: s.baseFile.name }, s.baseFile.name) : h('span', { class: 'muted' }, 'none (log only)')),
            h('td', { class: 'num' }, s.baseFile ? bytes(s.baseFile.size) : '–'),
            h('td', null, s.logFiles.length ? h('ul', { class: 'logs' }, s.logFiles.map((l) => h('li', null, h('code', { title: l.name }, `log v${l.version} @ ${l.instant}`), ` ${bytes(l.size)}`))) : h('span', { class: 'muted' }, '–')),
            h('td', { class: 'num' }, bytes(s.size)))))),
    );
  };

  const rows = layout.partitions.map((p) => {
    const psize = p.fileGroups.reduce((n, g) => n + (g.slices.at(-1)?.size ?? 0), 0);
    return h('div', { class: 'prow' },
      h('div', { class: 'plabel', title: p.partition || '(not partitioned)' },
        h('code', null, p.partition || '(root)'),
        h('span', { class: 'muted' }, `${plural(p.fileGroups.length, 'group')} · ${bytes(psize)}`)),
      h('div', { class: 'tiles' }, p.fileGroups.map((g) => {
        const latest = g.slices.at(-1)!;
        const shade = 0.18 + 0.82 * Math.sqrt(latest.size / max);
        const logBytes = latest.logFiles.reduce((n, l) => n + l.size, 0);
        const pend = pendingOf(g.fileId);
        const isSmall = Boolean(latest.baseFile && latest.baseFile.size < smallLimit);
        const tile: HTMLElement = h('button', {
          type: 'button',
          class: `tile${isSmall ? ' small' : ''}${pend.length ? ` pending pending-${pend[0]!.kind}` : ''}`,
          'data-testid': 'file-group',
          'data-file-id': g.fileId,
          style: `--shade:${shade.toFixed(3)}`,
          title: `${g.fileId}\n${bytes(latest.size)} latest slice${latest.logFiles.length ? ` (${latest.logFiles.length} log files, ${bytes(logBytes)})` : ''}\n${plural(g.slices.length, 'slice')}${pend.length ? `\npending ${pend.map((x) => x.kind).join(', ')}` : ''}`,
          onclick: () => showGroup(p, g, tile),
        },
          latest.logFiles.length ? h('i', { class: 'logfoot', style: `height:${Math.max(4, Math.min(14, 4 + latest.logFiles.length * 2))}px` }) : null,
          g.slices.length > 1 ? h('i', { class: 'slices' }, '•'.repeat(Math.min(g.slices.length - 1, 4))) : null);
        return tile;
      })),
    );
  });

  return h(
    'div',
    { class: 'layout' },
    h('div', { class: 'layout-summary' },
      h('div', { class: 'stats' },
        h('div', { class: 'stat' }, h('div', { class: 'stat-value' }, count(layout.partitions.length)), h('div', { class: 'stat-label' }, 'partitions')),
        h('div', { class: 'stat' }, h('div', { class: 'stat-value' }, count(groups.length)), h('div', { class: 'stat-label' }, 'file groups')),
        h('div', { class: 'stat' }, h('div', { class: 'stat-value' }, count(logs)), h('div', { class: 'stat-label' }, 'log files in latest slices')),
        h('div', { class: 'stat' }, h('div', { class: 'stat-value' }, bytes(med)), h('div', { class: 'stat-label' }, 'median slice')),
        h('div', { class: 'stat' }, h('div', { class: 'stat-value' }, med ? `${(max / med).toFixed(1)}×` : '–'), h('div', { class: 'stat-label' }, 'largest / median')),
        h('div', { class: `stat${small ? ' warn' : ''}` }, h('div', { class: 'stat-value' }, count(small)), h('div', { class: 'stat-label' }, `small files (< ${bytes(smallLimit)})`)),
        layout.replacedGroups ? h('div', { class: 'stat' }, h('div', { class: 'stat-value' }, count(layout.replacedGroups)), h('div', { class: 'stat-label' }, 'replaced groups')) : null),
      histogram(sizes)),
    pending.length
      ? h('div', { class: 'pending-list' }, pending.map((x) => h('span', { class: `pill pending-${x.kind}` }, `pending ${x.kind} `, h('code', null, x.instant.requestedTime), ` · ${plural(x.fileIds.size, 'file group')}`)))
      : null,
    h('div', { class: 'layout-legend muted' },
      h('span', null, h('i', { class: 'tile-key' }), ' file group (darker = larger latest slice)'),
      h('span', null, h('i', { class: 'tile-key log' }), ' has log files'),
      h('span', null, h('i', { class: 'tile-key small' }), ' small file'),
      h('span', null, '• older slices')),
    groups.length ? h('div', { class: 'layout-grid' }, rows) : h('p', { class: 'muted' }, 'No file groups: the table is empty.'),
    detail,
  );
}
