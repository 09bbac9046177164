// A table's health: the report's numbers, its findings by severity with what fixes each, the
// last day's writes as a bar chart, and the fix — run against a writable store, explained on
// a read-only one.

import type { DiscoveredTable, Discovery, FixOutcome, Health } from 'hudi-edge';
import { h } from '../dom';
import { bytes, count } from '../format';

const stat = (label: string, value: string | number, testid: string, warn = false) =>
  h('div', { class: `stat${warn ? ' warn' : ''}`, 'data-testid': testid }, h('b', null, String(value)), h('span', null, label));

function activityChart(hr: Health): HTMLElement {
  const max = Math.max(1, ...hr.activity.hourly.map((x) => x.commits));
  return h('div', { class: 'activity', 'data-testid': 'health-activity', title: 'commits per hour, last 24 hours' },
    hr.activity.hourly.map((x) =>
      h('div', { class: 'bar', style: `height:${Math.round((x.commits / max) * 100)}%`, title: `${new Date(x.hourMs).toISOString().slice(0, 13)}h: ${x.commits} commits, ${count(x.rows)} rows, ${bytes(x.bytes)}` })));
}

export function findingsView(findings: Health['findings']): HTMLElement {
  if (!findings.length) return h('p', { class: 'muted', 'data-testid': 'health-ok' }, 'No findings.');
  return h('ul', { class: 'findings' }, findings.map((f) =>
    h('li', { 'data-testid': 'finding', 'data-code': f.code, 'data-severity': f.severity },
      h('span', { class: `badge sev-${f.severity}` }, f.severity), ' ', h('code', null, f.code), ' ', f.message,
      h('div', { class: 'muted' }, 'fix: ', f.fix))));
}

/** The report; `fix` (absent on a read-only store, with `readOnly` saying why) runs the fixes
 *  and redraws with the report after them. */
export function healthView(hr: Health, fix: (() => Promise<{ fixes: FixOutcome[]; after: Health }>) | null, readOnly: string): HTMLElement {
  const el = h('div', { class: 'health', 'data-testid': 'health' });
  const draw = (r: Health, done: FixOutcome[] | null) => {
    const parts: (Node | null)[] = [
      h('div', { class: 'stats' },
        stat('file groups', count(r.fileGroups), 'health-file-groups'),
        stat('base files', count(r.baseFiles), 'health-base-files'),
        stat(`small (< ${bytes(r.smallFileLimit)})`, count(r.smallBaseFiles), 'health-small-files', r.smallBaseShare >= 0.5 && r.smallBaseFiles > 1),
        stat('log files', count(r.logFiles), 'health-log-files', (r.compaction?.due ?? false) && r.logFiles > 0),
        stat('max logs per slice', r.maxLogFilesPerSlice, 'health-max-logs'),
        stat('pending instants', r.pendingInstants.length, 'health-pending'),
        stat('failed writes', r.failedWrites, 'health-failed', r.failedWrites > 0),
        stat('active instants', r.activeTimelineInstants, 'health-active'),
        stat('metadata table behind', r.metadataTable.lagInstants, 'health-mdt-lag', r.metadataTable.lagInstants > 0),
        stat('requests', r.io.requests, 'health-requests')),
      h('h3', null, 'Findings'),
      findingsView(r.findings),
      h('h3', null, 'Writes, last 24 hours'),
      activityChart(r),
      h('p', { class: 'muted' }, `${r.activity.commitsLastWeek} commits in the last week: ${count(r.activity.rowsInserted)} rows inserted, ${count(r.activity.rowsUpdated)} updated, ${count(r.activity.rowsDeleted)} deleted, ${bytes(r.activity.bytesWritten)} written`),
      done ? h('ul', { class: 'fixes', 'data-testid': 'fixes' }, done.map((f) =>
        h('li', { 'data-testid': 'fix-outcome', 'data-service': f.service, 'data-ok': String(f.ok) }, `${f.service} (${f.code}): ${f.ok ? 'done' : `failed: ${f.error}`}`))) : null,
      fixButton(r)];
    el.replaceChildren(...parts.filter((p): p is Node => p !== null));
  };
  const fixButton = (r: Health) => {
    const fixable = r.findings.filter((f) => f.service);
    if (!fixable.length) return null;
    if (!fix) return h('p', { class: 'muted', 'data-testid': 'fix-unavailable' }, `Fixing needs a writable store: ${readOnly}`);
    const button = h('button', { type: 'button', class: 'primary', 'data-testid': 'fix' }, `Fix: run ${[...new Set(fixable.map((f) => f.service))].join(', ')}`);
    button.addEventListener('click', async () => {
      button.setAttribute('disabled', '');
      button.textContent = 'fixing…';
      try {
        const r2 = await fix();
        draw(r2.after, r2.fixes);
      } catch (e) {
        button.textContent = `fix failed: ${(e as Error).message}`;
      }
    });
    return button;
  };
  draw(hr, null);
  return el;
}

/** The tables under a prefix: one row each, sortable by column, filtered by name or path;
 *  a row opens its table. */
export function bucketView(d: Discovery, open: (t: DiscoveredTable) => void): HTMLElement {
  const sev = (t: DiscoveredTable, s: string) => t.severities[s] ?? 0;
  const columns: [string, (t: DiscoveredTable) => string | number][] = [
    ['path', (t) => t.path || '.'],
    ['name', (t) => t.name],
    ['type', (t) => t.tableType],
    ['version', (t) => t.version],
    ['bytes', (t) => t.bytes ?? -1],
    ['last commit', (t) => t.lastCommit ?? ''],
    ['critical', (t) => sev(t, 'critical')],
    ['warning', (t) => sev(t, 'warning')],
    ['info', (t) => sev(t, 'info')],
  ];
  let sortBy = 0;
  let desc = false;
  let filter = '';
  const body = h('tbody');
  const draw = () => {
    const rows = d.tables
      .filter((t) => !filter || `${t.path} ${t.name}`.toLowerCase().includes(filter))
      .sort((a, b) => {
        const [x, y] = [columns[sortBy][1](a), columns[sortBy][1](b)];
        const c = x < y ? -1 : x > y ? 1 : 0;
        return desc ? -c : c;
      });
    body.replaceChildren(...rows.map((t) =>
      h('tr', { 'data-testid': 'bucket-row', 'data-path': t.path, class: 'clickable', onclick: () => open(t) },
        columns.map(([name, get]) => {
          const v = get(t);
          return h('td', { 'data-col': name }, name === 'bytes' ? (t.bytes === null ? '–' : bytes(t.bytes)) : String(v));
        }),
        h('td', { class: 'muted' }, t.error ?? t.findings.map((f) => f.code).join(', ')))));
  };
  const head = h('tr', null, columns.map(([name], i) =>
    h('th', { class: 'sortable', onclick: () => { desc = sortBy === i ? !desc : false; sortBy = i; draw(); } }, name)), h('th', null, 'findings'));
  const search = h('input', { type: 'search', placeholder: 'filter by path or name', 'data-testid': 'bucket-filter' });
  search.addEventListener('input', () => { filter = search.value.toLowerCase(); draw(); });
  draw();
  return h('section', { class: 'bucket', 'data-testid': 'bucket' },
    h('h2', null, `${d.tables.length} tables under `, h('code', null, d.root)),
    h('p', { class: 'muted' }, `${count(d.listings)} listings, ${count(d.objectsSeen)} objects seen`),
    d.limits.map((l) => h('p', { class: 'badge warn', 'data-testid': 'bucket-limit' }, l)),
    search,
    h('table', { class: 'grid' }, h('thead', null, head), body));
}
