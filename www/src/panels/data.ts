// Data: snapshot / time-travel / incremental / read-optimized queries with a filter, columns and
// a limit; the rows; and the plan panel — how pruning narrowed the files, stage by stage, and
// what planning and reading cost in requests, bytes and time.

import type { HudiTable, Instant, Plan, Progress, ReadOptions, Row, TableInfo } from 'hudi-edge';
import { h, replace } from '../dom';
import { bytes, count, instantLabel, ms, plural } from '../format';
import { errorView } from './commit';

type Query = 'snapshot' | 'time_travel' | 'incremental' | 'read_optimized';

function cell(v: unknown): Node | string {
  if (v === null || v === undefined) return h('span', { class: 'null' }, 'null');
  // Integers past 2^53 arrive as bigints, which JSON.stringify refuses.
  if (typeof v === 'object') return h('code', { class: 'json' }, JSON.stringify(v, (_, x) => (typeof x === 'bigint' ? x.toString() : x)));
  if (typeof v === 'boolean') return h('span', { class: 'bool' }, String(v));
  return String(v);
}

export class DataPanel {
  readonly el: HTMLElement;
  private query: Query = 'snapshot';
  private readonly filter: HTMLInputElement;
  private readonly limit: HTMLInputElement;
  private readonly asOf: HTMLSelectElement;
  private readonly start: HTMLSelectElement;
  private readonly end: HTMLSelectElement;
  private readonly columnsBox: HTMLElement;
  private readonly runButton: HTMLButtonElement;
  private readonly results: HTMLElement;
  private readonly planBox: HTMLElement;
  private readonly status: HTMLElement;
  private readonly modes: HTMLElement;
  private controller: AbortController | null = null;
  private columns: string[] = [];

  constructor(private readonly table: HudiTable, info: TableInfo, instants: Instant[]) {
    const completed = instants.filter((i) => i.state === 'completed' && ['commit', 'deltacommit', 'replacecommit'].includes(i.action)).reverse();
    const option = (i: Instant) => h('option', { value: i.requestedTime }, `${i.requestedTime} · ${i.action}${i.operation ? ` ${i.operation}` : ''}`);
    this.asOf = h('select', { 'data-testid': 'query-as-of', 'aria-label': 'as of' }, completed.map(option));
    this.start = h('select', { 'data-testid': 'query-start', 'aria-label': 'after' }, h('option', { value: '19700101000000000' }, 'the beginning'), completed.slice(1).map(option));
    this.end = h('select', { 'data-testid': 'query-end', 'aria-label': 'up to' }, h('option', { value: '' }, 'the latest'), completed.map(option));
    this.filter = h('input', {
      type: 'text',
      'data-testid': 'query-filter',
      spellcheck: 'false',
      placeholder: `filter, e.g. ${info.partitionFields[0] ?? info.recordKeyFields[0] ?? 'col'} = value   (and / or, <, >=, in (…), is null)`,
      onkeydown: (e: KeyboardEvent) => e.key === 'Enter' && this.run(),
    });
    this.limit = h('input', { type: 'number', min: '0', value: '200', 'aria-label': 'limit', 'data-testid': 'query-limit' });
    this.columnsBox = h('div', { class: 'columns-list' });
    this.runButton = h('button', { type: 'button', class: 'primary', 'data-testid': 'run-query', onclick: () => (this.controller ? this.controller.abort() : this.run()) }, 'Run query');
    this.status = h('div', { class: 'status muted' });
    this.results = h('div', { class: 'results', 'data-testid': 'results' });
    this.planBox = h('div', { class: 'plan', 'data-testid': 'plan' }, h('p', { class: 'muted' }, 'Run a query to see how it is planned.'));
    const mor = info.type === 'MERGE_ON_READ';
    const modes: [Query, string][] = [['snapshot', 'Snapshot'], ['time_travel', 'Time travel'], ['incremental', 'Incremental'], ...(mor ? [['read_optimized', 'Read-optimized'] as [Query, string]] : [])];
    this.modes = h('div', { class: 'segmented', role: 'tablist' }, modes.map(([q, label]) => h('button', { type: 'button', role: 'tab', 'data-query': q, 'data-testid': `query-${q}`, onclick: () => this.setQuery(q) }, label)));
    this.el = h(
      'div',
      { class: 'data' },
      h('div', { class: 'query-form' },
        h('div', { class: 'query-row' },
          this.modes,
          h('label', { class: 'when when-time_travel' }, 'as of ', this.asOf),
          h('label', { class: 'when when-incremental' }, 'after ', this.start),
          h('label', { class: 'when when-incremental' }, 'up to ', this.end),
        ),
        h('div', { class: 'query-row' },
          this.filter,
          h('details', { class: 'columns-pick' }, h('summary', null, 'Columns'), this.columnsBox),
          h('label', { class: 'limit' }, 'limit ', this.limit),
          this.runButton)),
      this.status,
      h('div', { class: 'data-split' }, h('div', { class: 'data-main' }, this.results), h('aside', { class: 'data-side' }, h('h3', null, 'Plan'), this.planBox)),
    );
    this.setQuery('snapshot');
  }

  /** Column choices (from the latest commit's schema, meta columns first). */
  setColumns(columns: string[]) {
    this.columns = columns;
    replace(
      this.columnsBox,
      h('div', { class: 'columns-actions' },
        h('button', { type: 'button', onclick: () => this.columnsBox.querySelectorAll('input').forEach((i) => (i.checked = true)) }, 'all'),
        h('button', { type: 'button', onclick: () => this.columnsBox.querySelectorAll('input').forEach((i) => (i.checked = !i.name.startsWith('_hoodie'))) }, 'no meta'),
        h('button', { type: 'button', onclick: () => this.columnsBox.querySelectorAll('input').forEach((i) => (i.checked = false)) }, 'none')),
      columns.map((c) => h('label', null, h('input', { type: 'checkbox', name: c, checked: true }), c)),
    );
  }

  private setQuery(q: Query) {
    this.query = q;
    for (const b of this.modes.querySelectorAll<HTMLElement>('button')) b.classList.toggle('active', b.dataset.query === q);
    this.el.dataset.query = q;
  }

  options(): ReadOptions {
    const o: ReadOptions = {};
    if (this.query === 'time_travel') o.asOf = this.asOf.value;
    if (this.query === 'incremental') {
      o.query = 'incremental';
      o.start = this.start.value;
      if (this.end.value) o.end = this.end.value;
    }
    if (this.query === 'read_optimized') o.query = 'read_optimized';
    const f = this.filter.value.trim();
    if (f) o.filters = [f];
    const picked = [...this.columnsBox.querySelectorAll<HTMLInputElement>('input:checked')].map((i) => i.name);
    if (this.columns.length && picked.length && picked.length < this.columns.length) o.columns = picked;
    const limit = Number(this.limit.value);
    if (this.limit.value !== '' && Number.isFinite(limit) && limit >= 0) o.limit = limit;
    return o;
  }

  async run() {
    if (this.controller) return;
    const controller = new AbortController();
    this.controller = controller;
    const o = { ...this.options(), signal: controller.signal };
    this.runButton.textContent = 'Cancel';
    this.runButton.classList.add('running');
    this.el.dataset.state = 'running';
    const progress = h('progress', { max: 1, value: 0 });
    replace(this.status, progress, h('span', null, ' planning…'));
    try {
      const plan = await this.table.plan(o);
      this.showPlan(plan, null);
      const t0 = performance.now();
      let last: Progress | null = null;
      const rows = await this.table.rows({
        ...o,
        onProgress: (p) => {
          last = p;
          progress.max = Math.max(1, p.filesTotal);
          progress.value = p.filesDone;
          replace(this.status, progress, h('span', null, ` reading ${count(p.filesDone)} / ${count(p.filesTotal)} files · ${count(p.requests)} requests · ${bytes(p.bytes)}`));
        },
      });
      const took = performance.now() - t0;
      this.showRows(rows, o.limit);
      this.showPlan(plan, { ms: took, progress: last });
      replace(this.status, h('span', null, `${count(rows.length)} rows · planned in ${ms(plan.timeMs)} · read in ${ms(took)}`), (last as Progress | null) ? h('span', null, ` · ${count((last as unknown as Progress).requests)} requests, ${bytes((last as unknown as Progress).bytes)}`) : null);
      this.el.dataset.state = 'done';
    } catch (e) {
      replace(this.results, errorView(e, 'The query failed'));
      replace(this.status, h('span', null, (e as { code?: string }).code === 'ABORTED' ? 'cancelled' : 'failed'));
      this.el.dataset.state = 'error';
    } finally {
      this.controller = null;
      this.runButton.textContent = 'Run query';
      this.runButton.classList.remove('running');
    }
  }

  private showRows(rows: Row[], limit: number | undefined) {
    if (!rows.length) {
      replace(this.results, h('div', { class: 'empty' }, 'No rows match.'));
      return;
    }
    const cols = Object.keys(rows[0]!);
    replace(
      this.results,
      h('div', { class: 'table-scroll' },
        h('table', { class: 'grid-table rows' },
          h('thead', null, h('tr', null, h('th', { class: 'rownum' }, '#'), cols.map((c) => h('th', { class: c.startsWith('_hoodie') ? 'meta' : '' }, c)))),
          h('tbody', null, rows.map((r, n) => h('tr', { 'data-testid': 'result-row' }, h('td', { class: 'rownum' }, n + 1), cols.map((c) => h('td', { class: typeof r[c] === 'number' || typeof r[c] === 'bigint' ? 'num' : '' }, cell(r[c])))))))),
      limit !== undefined && rows.length >= limit ? h('p', { class: 'muted' }, `Showing the first ${count(limit)} rows (the limit).`) : null,
    );
  }

  private showPlan(plan: Plan, read: { ms: number; progress: Progress | null } | null) {
    const st = plan.stats;
    const total = Math.max(1, st.filesTotal);
    const stages: { label: string; n: number | undefined; note: string; testid?: string }[] = [
      { label: 'Files in the table', n: st.filesTotal, note: `${count(st.partitionsTotal)} partitions · ${count(st.slicesTotal)} latest slices` },
      { label: 'Partition pruning', n: st.filesAfterPartitionPruning, note: `${count(st.partitionsAfterPruning)} of ${count(st.partitionsTotal)} partitions kept` },
      { label: 'Partition stats', n: st.filesAfterPartitionStats, note: 'metadata table: partition_stats' },
      { label: 'Column stats', n: st.filesAfterColumnStats, note: 'metadata table: column_stats' },
      { label: 'Record index', n: st.filesAfterRecordIndex, note: 'metadata table: record_index' },
      { label: 'File footers', n: st.filesAfterFileStats, note: 'Parquet min/max statistics' },
    ];
    let prev = st.filesTotal;
    const rows = stages.map((s) => {
      if (s.n === undefined) {
        return h('div', { class: 'stage skipped' },
          h('div', { class: 'stage-label' }, s.label),
          h('div', { class: 'stage-bar' }),
          h('div', { class: 'stage-n muted' }, '—'),
          h('div', { class: 'stage-note muted' }, `not used · ${s.note}`));
      }
      const dropped = prev - s.n;
      prev = s.n;
      return h('div', { class: 'stage' },
        h('div', { class: 'stage-label' }, s.label),
        h('div', { class: 'stage-bar' }, h('div', { class: 'stage-fill', style: `width:${(s.n / total) * 100}%` })),
        h('div', { class: 'stage-n' }, count(s.n), dropped > 0 ? h('small', null, ` −${count(dropped)}`) : null),
        h('div', { class: 'stage-note muted' }, s.note));
    });
    const io = plan.io;
    replace(
      this.planBox,
      h('div', { class: 'funnel' },
        rows,
        h('div', { class: 'stage selected' },
          h('div', { class: 'stage-label' }, 'Selected'),
          h('div', { class: 'stage-bar' }, h('div', { class: 'stage-fill', style: `width:${(st.filesSelected / total) * 100}%` })),
          h('div', { class: 'stage-n' }, h('b', { 'data-testid': 'plan-files-selected' }, String(st.filesSelected))),
          h('div', { class: 'stage-note muted' }, `${plural(st.slicesSelected, 'slice')} · ${plural(plan.fileSlices.reduce((n, s) => n + s.logFiles.length, 0), 'log file')}`))),
      h('dl', { class: 'plan-facts' },
        h('dt', null, 'Query'), h('dd', null, plan.query, plan.asOf ? h('span', { class: 'muted' }, ` as of ${instantLabel(plan.asOf)}`) : null, plan.start ? h('span', { class: 'muted' }, ` (${plan.start}, ${plan.end ?? 'latest'}]`) : null),
        h('dt', null, 'Planned from'), h('dd', { 'data-testid': 'plan-source' }, st.planningSource.replace('_', ' ')),
        h('dt', null, 'Planning'), h('dd', null, `${ms(plan.timeMs)} · ${count(io.requests)} requests (${count(io.lists)} lists, ${count(io.gets)} gets) · ${bytes(io.bytes)} · ${count(io.roundTrips)} round trips`),
        read ? h('dt', null, 'Reading') : null,
        read ? h('dd', null, `${ms(read.ms)}`, read.progress ? ` · ${plural(read.progress.requests, 'request')} · ${bytes(read.progress.bytes)} · ${plural(read.progress.filesDone, 'file')}` : '') : null,
        st.filesIgnored ? h('dt', null, 'Ignored') : null,
        st.filesIgnored ? h('dd', null, `${count(st.filesIgnored)} files on storage outside the timeline (uncommitted, replaced, cleaned)`) : null),
      st.planningNotes.length ? h('ul', { class: 'notes' }, st.planningNotes.map((n) => h('li', null, n))) : null,
    );
  }
}
