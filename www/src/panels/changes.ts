// Changes: the change feed of one commit, or of a range of commits — inserts, updates with a
// field-level diff of the before and after images, deletes — paged, with counts per operation.
// A table without change data capture shows what an incremental read of the same commits
// tells instead (the records they wrote), and says so. Nothing is read until a commit or a
// range is picked.

import type { Change, ChangeStats, HudiTable, Instant, Row, TableInfo } from 'hudi-edge';
import { h, replace } from '../dom';
import { bytes, count, instantLabel, ms, plural } from '../format';
import { errorView } from './commit';

const WRITES = ['commit', 'deltacommit', 'replacecommit'];
const PAGE = 25;
const OPS: Record<Change['op'], string> = { i: 'insert', u: 'update', d: 'delete' };
const isMeta = (field: string) => field.startsWith('_hoodie_');

/** A value as a cell shows it: text as it is, anything else as JSON; absent fields are empty. */
export function shown(v: unknown): string {
  if (v === undefined) return '';
  return typeof v === 'string' ? v : JSON.stringify(v);
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** The fields of a change's images, in their order (after's first, then any only before has). */
function fieldsOf(c: Change): string[] {
  return [...new Set([...Object.keys(c.after ?? {}), ...Object.keys(c.before ?? {})])];
}

/** The fields an update changed (meta fields left out when they are hidden). */
export function changedFields(c: Change, withMeta: boolean): string[] {
  if (c.op !== 'u' || !c.before || !c.after) return [];
  return fieldsOf(c).filter((f) => (withMeta || !isMeta(f)) && !same(c.before![f], c.after![f]));
}

interface Range {
  /** Requested times (the change feed's clock): `start` exclusive (the beginning when
   *  absent), `end` inclusive. */
  start?: string;
  end: string;
  label: string;
}

/** The same commits in an incremental read's clock: completion times from table version 8
 *  (`start`: when the write before `end`'s first commit completed), requested times before. */
function incrementalBounds(range: Range, writes: Instant[], version: number): { start: string; end: string } {
  const beginning = '19700101000000000';
  if (version < 8) return { start: range.start ?? beginning, end: range.end };
  const done = (i: Instant) => i.completionTime ?? i.requestedTime;
  const byCompletion = [...writes].sort((a, b) => (done(a) < done(b) ? -1 : 1));
  const end = writes.find((w) => w.requestedTime === range.end);
  const first = writes.find((w) => (range.start === undefined || w.requestedTime > range.start) && w.requestedTime <= range.end);
  const before = first ? byCompletion[byCompletion.indexOf(first) - 1] : undefined;
  return { start: before ? done(before) : beginning, end: end ? done(end) : range.end };
}

export class ChangesPanel {
  readonly el: HTMLElement;
  private readonly writes: Instant[];
  private readonly startPick: HTMLSelectElement;
  private readonly endPick: HTMLSelectElement;
  private readonly metaBox: HTMLInputElement;
  private readonly body: HTMLElement;
  private readonly cdc: boolean;
  private controller: AbortController | null = null;
  private changes: Change[] = [];
  private page = 0;

  constructor(private readonly table: HudiTable, private readonly info: TableInfo, instants: Instant[]) {
    this.writes = instants.filter((i) => i.state === 'completed' && WRITES.includes(i.action)).sort((a, b) => (a.requestedTime < b.requestedTime ? -1 : 1));
    this.cdc = info.properties['hoodie.table.cdc.enabled'] === 'true';
    const option = (i: Instant) => h('option', { value: i.requestedTime }, `${i.requestedTime} · ${i.action}${i.operation ? ` ${i.operation}` : ''}`);
    this.startPick = h('select', { 'data-testid': 'changes-start', 'aria-label': 'after' }, h('option', { value: '' }, 'the beginning'), this.writes.slice(0, -1).map(option));
    this.endPick = h('select', { 'data-testid': 'changes-end', 'aria-label': 'up to' }, [...this.writes].reverse().map(option));
    this.metaBox = h('input', { type: 'checkbox', 'data-testid': 'changes-meta', onchange: () => this.draw() }) as HTMLInputElement;
    this.body = h('div', { class: 'changes-body', 'data-testid': 'changes' },
      h('p', { class: 'muted' }, 'Pick a commit on the timeline (its detail has a “Changes” button), or a range here.'));
    const about = this.cdc
      ? `This table records a change feed (hoodie.table.cdc.enabled, supplemental logging mode ${info.properties['hoodie.table.cdc.supplemental.logging.mode'] ?? 'data_before_after'}): every insert, update and delete with the record before and after, as Apache Hudi's Spark CDC query returns them.`
      : 'This table records no change feed (hoodie.table.cdc.enabled is not set): for a commit or range, the records it wrote are shown, from an incremental read.';
    this.el = h('div', { class: 'changes' },
      h('p', { class: 'muted', 'data-testid': 'changes-about' }, about),
      h('div', { class: 'query-row' },
        h('label', null, 'after ', this.startPick),
        h('label', null, 'up to ', this.endPick),
        h('button', { type: 'button', class: 'primary', 'data-testid': 'changes-run', onclick: () => void this.showRange() }, 'Show changes'),
        h('label', { class: 'check', title: '_hoodie_commit_time, _hoodie_commit_seqno, _hoodie_file_name … change with every write' }, this.metaBox, ' show Hudi meta fields (_hoodie_*)')),
      this.body);
  }

  /** The changes of one commit: after the write completed before it, up to it. */
  showCommit(i: Instant): Promise<void> {
    const at = this.writes.findIndex((w) => w.requestedTime === i.requestedTime);
    const previous = at > 0 ? this.writes[at - 1]!.requestedTime : undefined;
    this.startPick.value = previous ?? '';
    this.endPick.value = i.requestedTime;
    return this.load({ start: previous, end: i.requestedTime, label: `commit ${i.requestedTime} (${i.action}${i.operation ? ` ${i.operation}` : ''})` });
  }

  private showRange(): Promise<void> {
    const start = this.startPick.value || undefined;
    const end = this.endPick.value;
    if (start && end <= start) {
      replace(this.body, h('p', { class: 'error-box', role: 'alert' }, `“up to” (${end}) must come after “after” (${start}).`));
      return Promise.resolve();
    }
    return this.load({ start, end, label: `commits after ${start ? instantLabel(start) : 'the beginning'} up to ${instantLabel(end)}` });
  }

  private async load(range: Range) {
    this.controller?.abort();
    const controller = new AbortController();
    this.controller = controller;
    delete this.el.dataset.ready;
    replace(this.body, h('div', { class: 'loading-inline' }, h('div', { class: 'spinner small' }), `reading the changes of ${range.label}…`));
    const t0 = performance.now();
    try {
      if (this.cdc) {
        const { table, stats } = await this.table.changesArrow({ start: range.start, end: range.end, signal: controller.signal });
        const image = (v: unknown) => (v == null ? null : (JSON.parse(String(v)) as Record<string, unknown>));
        this.changes = [...table].map((r) => ({ op: String(r.op) as Change['op'], tsMs: String(r.ts_ms), instant: String(r.ts_ms), before: image(r.before), after: image(r.after) }));
        this.page = 0;
        this.drawFeed(range, stats, performance.now() - t0);
      } else {
        const rows = await this.table.rows({ query: 'incremental', ...incrementalBounds(range, this.writes, this.info.version), signal: controller.signal });
        const detail = range.start === this.previousOf(range.end) ? await this.table.commit(range.end, { signal: controller.signal }).catch(() => null) : null;
        this.drawWritten(range, rows, detail && { inserted: detail.inserted, updated: detail.updated, deleted: detail.deleted }, performance.now() - t0);
      }
      this.el.dataset.ready = 'yes';
    } catch (e) {
      if (controller.signal.aborted) return;
      replace(this.body, errorView(e, `Could not read the changes of ${range.label}`));
    } finally {
      if (this.controller === controller) this.controller = null;
    }
  }

  private previousOf(end: string): string | undefined {
    const at = this.writes.findIndex((w) => w.requestedTime === end);
    return at > 0 ? this.writes[at - 1]!.requestedTime : undefined;
  }

  private keyOf(image: Record<string, unknown> | null): string {
    if (!image) return '';
    const key = image._hoodie_record_key;
    if (typeof key === 'string') return key;
    return this.info.recordKeyFields.map((f) => shown(image[f])).join(',');
  }

  private feed: { range: Range; stats: ChangeStats; took: number } | null = null;

  private drawFeed(range: Range, stats: ChangeStats, took: number) {
    this.feed = { range, stats, took };
    this.draw();
  }

  /** Redraws the feed shown (a page turned, meta fields shown or hidden). */
  private draw() {
    if (!this.feed) return;
    const { range, stats, took } = this.feed;
    const withMeta = this.metaBox.checked;
    const pages = Math.max(1, Math.ceil(this.changes.length / PAGE));
    this.page = Math.min(this.page, pages - 1);
    const from = this.page * PAGE;
    const shownChanges = this.changes.slice(from, from + PAGE);
    const io = (x: { requests: number; bytes: number }) => `${count(x.requests)} requests · ${bytes(x.bytes)}`;
    const opStat = (op: Change['op'], label: string) =>
      h('div', { class: `stat op-${op}`, 'data-testid': `changes-${OPS[op]}s` }, h('div', { class: 'stat-value' }, count(stats.operations[op] ?? 0)), h('div', { class: 'stat-label' }, label));
    replace(
      this.body,
      h('h3', null, `Changes of ${range.label}`),
      h('div', { class: 'stats' },
        opStat('i', 'inserts'),
        opStat('u', 'updates'),
        opStat('d', 'deletes'),
        h('div', { class: 'stat' }, h('div', { class: 'stat-value' }, count(stats.instants)), h('div', { class: 'stat-label' }, 'commits with changes')),
        h('div', { class: 'stat', title: Object.entries(stats.splits).map(([k, n]) => `${k}: ${n}`).join('\n') }, h('div', { class: 'stat-value' }, count(Object.values(stats.splits).reduce((a, b) => a + b, 0))), h('div', { class: 'stat-label' }, 'file-group changes read'))),
      h('p', { class: 'muted' },
        `planned in ${io(stats.planIo)}, read in ${io(stats.readIo)}, ${ms(took)}. `,
        withMeta ? 'Hudi meta fields are shown and count as changes. ' : 'Hudi meta fields (_hoodie_*) are hidden and their changes ignored. ',
        'Images are as Spark shows them: dates as days since 1970-01-01, timestamps as microseconds, decimals as Spark 1.1.1 renders them ({"zero": …}) or, read from CDC log files, as Avro’s bytes.'),
      this.changes.length ? this.pager(pages) : h('p', { class: 'muted', 'data-testid': 'changes-none' }, 'No changes in this range (a compaction or clustering rewrites records without changing them).'),
      h('div', { class: 'change-list' }, shownChanges.map((c) => this.changeView(c, withMeta))),
    );
  }

  private pager(pages: number): HTMLElement {
    const from = this.page * PAGE;
    const turn = (d: number) => () => {
      this.page += d;
      this.draw();
    };
    return h('div', { class: 'pager' },
      h('button', { type: 'button', class: 'small-btn', 'data-testid': 'changes-prev', disabled: this.page === 0, onclick: turn(-1) }, '‹ previous'),
      h('span', { 'data-testid': 'changes-page' }, `${count(from + 1)}–${count(Math.min(from + PAGE, this.changes.length))} of ${plural(this.changes.length, 'change')}`),
      h('button', { type: 'button', class: 'small-btn', 'data-testid': 'changes-next', disabled: this.page >= pages - 1, onclick: turn(1) }, 'next ›'));
  }

  private changeView(c: Change, withMeta: boolean): HTMLElement {
    const changed = new Set(changedFields(c, withMeta));
    const fields = fieldsOf(c).filter((f) => withMeta || !isMeta(f));
    const sides: ('before' | 'after')[] = c.op === 'i' ? ['after'] : c.op === 'd' ? ['before'] : ['before', 'after'];
    return h('div', { class: `change op-${c.op}`, 'data-testid': 'change', 'data-op': c.op, 'data-instant': c.instant },
      h('div', { class: 'change-head' },
        h('span', { class: `badge op-${c.op}` }, OPS[c.op]),
        h('code', null, this.keyOf(c.after ?? c.before)),
        h('span', { class: 'muted' }, `${c.instant} · ${instantLabel(c.instant)}`),
        c.op === 'u' ? h('span', { class: 'muted' }, changed.size ? `${plural(changed.size, 'field')} changed` : 'no field changed') : null),
      h('table', { class: 'grid-table diff' },
        h('thead', null, h('tr', null, h('th', null, 'field'), sides.map((s) => h('th', null, c.op === 'u' ? s : 'value')))),
        h('tbody', null, fields.map((f) =>
          h('tr', { 'data-field': f, class: changed.has(f) ? 'changed' : undefined },
            h('td', { class: isMeta(f) ? 'meta' : undefined }, f),
            sides.map((s) => {
              const image = c[s];
              const has = image !== null && f in image;
              return h('td', { class: `wrap ${s}`, 'data-side': s, 'data-absent': has ? null : 'yes' }, has ? shown(image[f]) : '');
            }))))));
  }

  /** What an incremental read of the range returns: the records its commits wrote. */
  private drawWritten(range: Range, rows: Row[], counts: { inserted: number; updated: number; deleted: number } | null, took: number) {
    this.feed = null;
    const columns = rows.length ? Object.keys(rows[0]!) : [];
    const cell = (v: unknown) => (v === null || v === undefined ? h('span', { class: 'null' }, 'null') : typeof v === 'object' ? JSON.stringify(v, (_, x) => (typeof x === 'bigint' ? x.toString() : x)) : String(v));
    replace(
      this.body,
      h('h3', null, `Records written by ${range.label}`),
      h('p', { class: 'notice', 'data-testid': 'changes-incremental' },
        'No change feed: this table does not record one (hoodie.table.cdc.enabled). These are the records as the commits wrote them, from an incremental read: it cannot tell inserts from updates, has no before image, and deleted records do not show.'),
      counts
        ? h('div', { class: 'stats' },
            h('div', { class: 'stat', 'data-testid': 'written-inserted' }, h('div', { class: 'stat-value' }, count(counts.inserted)), h('div', { class: 'stat-label' }, 'inserted (commit metadata)')),
            h('div', { class: 'stat', 'data-testid': 'written-updated' }, h('div', { class: 'stat-value' }, count(counts.updated)), h('div', { class: 'stat-label' }, 'updated (commit metadata)')),
            h('div', { class: 'stat', 'data-testid': 'written-deleted' }, h('div', { class: 'stat-value' }, count(counts.deleted)), h('div', { class: 'stat-label' }, 'deleted (commit metadata)')))
        : null,
      h('p', { class: 'muted', 'data-testid': 'written-count' }, `${plural(rows.length, 'record')} written, read in ${ms(took)}.`),
      rows.length
        ? h('div', { class: 'table-scroll' },
            h('table', { class: 'grid-table' },
              h('thead', null, h('tr', null, columns.map((c) => h('th', { class: isMeta(c) ? 'meta' : undefined }, c)))),
              h('tbody', null, rows.slice(0, 200).map((r) => h('tr', { 'data-testid': 'written-row' }, columns.map((c) => h('td', null, cell(r[c]))))))))
        : null,
      rows.length > 200 ? h('p', { class: 'muted' }, `The first 200 of ${count(rows.length)}; the Data card's incremental query reads them all.`) : null,
    );
  }
}
