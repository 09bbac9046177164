// The timeline: every instant on a zoomable time axis, one lane per action, drawn from its
// requested time to its completion time and coloured by action; state and active/archived
// in the mark's style. Below it, the same instants as a table. Selecting either opens the
// instant's detail.

import type { Instant } from 'hudi-edge';
import { actionColor, laneOf } from '../colors';
import { h, replace, s } from '../dom';
import { clockLabel, dayLabel, instantLabel, instantMillis, ms, timeTicks } from '../format';

const LANE_ORDER = ['commit', 'deltacommit', 'replacecommit', 'clustering', 'compaction', 'logcompaction', 'clean', 'rollback', 'savepoint', 'restore', 'indexing', 'schemacommit'];
const GUTTER = 128;
const LANE_H = 30;
const AXIS_H = 40;
const RIGHT = 18;

export interface RolledBack {
  requestedTime: string;
  by: string;
}

interface Placed {
  instant: Instant;
  start: number;
  end: number;
  lane: number;
}

export class TimelineView {
  readonly el: HTMLElement;
  private readonly chart: HTMLElement;
  private readonly list: HTMLElement;
  private readonly tooltip: HTMLElement;
  private readonly legend: HTMLElement;
  private readonly tools: HTMLElement;
  private instants: Instant[] = [];
  private placed: Placed[] = [];
  private lanes: string[] = [];
  private ghosts: RolledBack[] = [];
  private full: [number, number] = [0, 1];
  private view: [number, number] = [0, 1];
  private width = 900;
  private selected: string | null = null;

  constructor(private readonly onSelect: (i: Instant) => void) {
    this.chart = h('div', { class: 'tl-chart', 'data-testid': 'timeline' });
    this.tooltip = h('div', { class: 'tooltip', hidden: true });
    this.list = h('div', { class: 'tl-list' });
    this.legend = h('div', { class: 'legend' });
    const zoom = (f: number) => () => this.zoomBy(f, (this.view[0] + this.view[1]) / 2);
    this.el = h(
      'div',
      { class: 'timeline' },
      h(
        'div',
        { class: 'tl-toolbar' },
        this.legend,
        (this.tools = h(
          'div',
          { class: 'tl-tools' },
          h(
            'div',
            { class: 'btn-group' },
            h('button', { type: 'button', title: 'Zoom in', onclick: zoom(0.5) }, '+'),
            h('button', { type: 'button', title: 'Zoom out', onclick: zoom(2) }, '−'),
            h('button', { type: 'button', title: 'Fit all instants', onclick: () => this.fit() }, 'Fit'),
          ),
        )),
      ),
      h('div', { class: 'tl-frame' }, this.chart, this.tooltip),
      h('p', { class: 'hint' }, 'Scroll to zoom, drag to pan, double-click to fit. Bars run from requested to completion time.'),
      this.list,
    );
    new ResizeObserver(() => {
      const w = this.chart.clientWidth;
      if (w > 0 && Math.abs(w - this.width) > 1) {
        this.width = w;
        this.draw();
      }
    }).observe(this.chart);
    this.chart.addEventListener('wheel', (e) => this.onWheel(e), { passive: false });
    this.chart.addEventListener('pointerdown', (e) => this.onDrag(e));
    this.chart.addEventListener('dblclick', () => this.fit());
  }

  /** A control placed before the zoom buttons. */
  addTool(el: HTMLElement) {
    this.tools.prepend(el);
  }

  /** Shows `instants` (archived first, then active, by requested time). */
  set(instants: Instant[]) {
    const keepView = this.instants.length > 0 && this.instants.length === instants.length;
    this.instants = instants;
    const present = new Set(instants.map(laneOf));
    this.lanes = [...LANE_ORDER.filter((l) => present.has(l)), ...[...present].filter((l) => !LANE_ORDER.includes(l)).sort()];
    this.placed = instants.map((instant) => {
      const start = instantMillis(instant.requestedTime) ?? 0;
      const done = instantMillis(instant.completionTime);
      // v6 completion times come from file modification times (another clock, maybe another
      // timezone): draw only those that follow the request.
      const end = done !== null && done >= start && done - start < 86_400_000 ? done : start;
      return { instant, start, end, lane: this.lanes.indexOf(laneOf(instant)) };
    });
    const t0 = Math.min(...this.placed.map((p) => p.start));
    const t1 = Math.max(...this.placed.map((p) => p.end));
    const pad = Math.max((t1 - t0) * 0.04, 500);
    this.full = this.placed.length ? [t0 - pad, t1 + pad] : [0, 1];
    if (!keepView) this.view = [...this.full];
    this.width = this.chart.clientWidth || this.width;
    this.drawLegend();
    this.draw();
    this.drawList();
  }

  setRolledBack(ghosts: RolledBack[]) {
    this.ghosts = ghosts;
    this.draw();
  }

  select(requestedTime: string | null) {
    this.selected = requestedTime;
    this.draw();
    for (const tr of this.list.querySelectorAll<HTMLElement>('tr[data-requested-time]')) {
      tr.classList.toggle('selected', tr.dataset.requestedTime === requestedTime);
    }
  }

  fit() {
    this.view = [...this.full];
    this.draw();
  }

  private x(t: number) {
    return GUTTER + ((t - this.view[0]) / (this.view[1] - this.view[0])) * (this.width - GUTTER - RIGHT);
  }

  private timeAt(px: number) {
    return this.view[0] + ((px - GUTTER) / (this.width - GUTTER - RIGHT)) * (this.view[1] - this.view[0]);
  }

  private zoomBy(factor: number, at: number) {
    const fullSpan = this.full[1] - this.full[0];
    const span = Math.min(Math.max((this.view[1] - this.view[0]) * factor, 5), fullSpan * 1.5);
    const k = (at - this.view[0]) / (this.view[1] - this.view[0]);
    this.view = [at - k * span, at - k * span + span];
    this.draw();
  }

  private onWheel(e: WheelEvent) {
    e.preventDefault();
    const rect = this.chart.getBoundingClientRect();
    const px = e.clientX - rect.left;
    if (px < GUTTER) return;
    this.zoomBy(Math.pow(1.0018, e.deltaY), this.timeAt(px));
  }

  private onDrag(e: PointerEvent) {
    if (e.button !== 0) return;
    const startX = e.clientX;
    const startView = [...this.view] as [number, number];
    let moved = false;
    const move = (ev: PointerEvent) => {
      const dx = ev.clientX - startX;
      if (Math.abs(dx) > 3) moved = true;
      if (!moved) return;
      const dt = (dx / (this.width - GUTTER - RIGHT)) * (startView[1] - startView[0]);
      this.view = [startView[0] - dt, startView[1] - dt];
      this.draw();
    };
    const up = () => {
      window.removeEventListener('pointermove', move);
      window.removeEventListener('pointerup', up);
      if (moved) this.chart.dataset.dragged = String(Date.now());
    };
    window.addEventListener('pointermove', move);
    window.addEventListener('pointerup', up);
  }

  private drawLegend() {
    replace(
      this.legend,
      this.lanes.map((l) => h('span', { class: 'legend-item' }, h('i', { style: `background:${actionColor(l)}` }), l)),
      h('span', { class: 'legend-sep' }),
      h('span', { class: 'legend-item' }, h('i', { class: 'st-completed' }), 'completed'),
      h('span', { class: 'legend-item' }, h('i', { class: 'st-inflight' }), 'inflight'),
      h('span', { class: 'legend-item' }, h('i', { class: 'st-requested' }), 'requested'),
      this.instants.some((i) => i.archived) ? h('span', { class: 'legend-item' }, h('i', { class: 'st-archived' }), 'archived') : null,
      this.ghosts.length || this.instants.some((i) => i.action === 'rollback') ? h('span', { class: 'legend-item' }, h('i', { class: 'st-rolledback' }), 'rolled back') : null,
    );
  }

  private draw() {
    const W = this.width;
    const H = AXIS_H + Math.max(1, this.lanes.length) * LANE_H + 10;
    const svg = s('svg', { width: W, height: H, viewBox: `0 0 ${W} ${H}`, class: 'tl-svg', role: 'img', 'aria-label': 'Timeline of the table' });
    const defs = s('defs');
    const clip = s('clipPath', { id: 'tl-clip' }, s('rect', { x: GUTTER, y: 0, width: W - GUTTER - RIGHT + 8, height: H }));
    defs.append(clip);
    for (const l of this.lanes) {
      defs.append(
        s('pattern', { id: `stripe-${l}`, width: 6, height: 6, patternUnits: 'userSpaceOnUse', patternTransform: 'rotate(45)' },
          s('rect', { width: 6, height: 6, fill: '#fff' }),
          s('rect', { width: 3, height: 6, fill: actionColor(l), 'fill-opacity': 0.55 })),
      );
    }
    svg.append(defs);

    // Lanes and their labels.
    this.lanes.forEach((l, n) => {
      const y = AXIS_H + n * LANE_H;
      svg.append(s('rect', { x: 0, y, width: W, height: LANE_H, class: n % 2 ? 'lane odd' : 'lane' }));
      svg.append(s('circle', { cx: 14, cy: y + LANE_H / 2, r: 4.5, fill: actionColor(l) }));
      svg.append(s('text', { x: 26, y: y + LANE_H / 2 + 4, class: 'lane-label' }, l));
    });

    // Axis: ticks, grid lines, the date where it changes.
    const { step, ticks } = timeTicks(this.view[0], this.view[1], Math.max(2, Math.floor((W - GUTTER) / 110)));
    const axis = s('g', { class: 'axis', 'clip-path': 'url(#tl-clip)' });
    let lastDay = '';
    for (const t of ticks) {
      const x = this.x(t);
      axis.append(s('line', { x1: x, x2: x, y1: AXIS_H - 6, y2: H - 6, class: 'grid' }));
      if (x > W - RIGHT - 60) continue; // no label cut by the edge
      axis.append(s('text', { x: x + 3, y: AXIS_H - 10, class: 'tick' }, clockLabel(t, step)));
      const day = dayLabel(t);
      if (step < 86_400_000 && day !== lastDay) {
        axis.append(s('text', { x: x + 3, y: 13, class: 'tick day' }, day));
        lastDay = day;
      }
    }
    svg.append(axis);
    svg.append(s('line', { x1: GUTTER, x2: W - RIGHT, y1: AXIS_H - 0.5, y2: AXIS_H - 0.5, class: 'axis-line' }));

    const marks = s('g', { 'clip-path': 'url(#tl-clip)' });
    // Where the archived timeline ends and the active one starts.
    const firstActive = this.placed.find((p) => !p.instant.archived);
    if (firstActive && this.placed.some((p) => p.instant.archived)) {
      const x = this.x(firstActive.start) - 6;
      marks.append(s('line', { x1: x, x2: x, y1: AXIS_H, y2: H - 4, class: 'boundary' }));
      marks.append(s('text', { x: x - 4, y: H - 8, class: 'boundary-label', 'text-anchor': 'end' }, 'archived'));
      marks.append(s('text', { x: x + 4, y: H - 8, class: 'boundary-label' }, 'active'));
    }

    for (const p of this.placed) {
      const { instant: i } = p;
      const y = AXIS_H + p.lane * LANE_H + 7;
      const x0 = this.x(p.start);
      const w = Math.max(this.x(p.end) - x0, 8);
      const color = actionColor(laneOf(i));
      const fill = i.state === 'completed' ? color : i.state === 'inflight' ? `url(#stripe-${laneOf(i)})` : '#fff';
      const rect = s('rect', {
        x: x0,
        y,
        width: w,
        height: LANE_H - 14,
        rx: 3,
        fill,
        stroke: color,
        'stroke-width': i.requestedTime === this.selected ? 2.5 : 1.2,
        'stroke-dasharray': i.state === 'requested' ? '3 2' : null,
        'fill-opacity': i.archived && i.state === 'completed' ? 0.45 : 1,
        class: `instant${i.requestedTime === this.selected ? ' selected' : ''}${i.archived ? ' archived' : ''}`,
        'data-testid': 'instant',
        'data-action': i.action,
        'data-state': i.state,
        'data-requested-time': i.requestedTime,
        'data-archived': String(i.archived),
        tabindex: 0,
        role: 'button',
        'aria-label': `${i.action} ${i.state} ${i.requestedTime}`,
      });
      rect.addEventListener('click', () => {
        if (Date.now() - Number(this.chart.dataset.dragged ?? 0) < 200) return;
        this.onSelect(i);
      });
      rect.addEventListener('keydown', (e) => (e.key === 'Enter' || e.key === ' ') && this.onSelect(i));
      rect.addEventListener('pointerenter', (e) => this.showTip(e, i));
      rect.addEventListener('pointermove', (e) => this.moveTip(e));
      rect.addEventListener('pointerleave', () => (this.tooltip.hidden = true));
      marks.append(rect);
      // The operation inside the bar when there is room for it.
      const label = i.operation ?? (i.state !== 'completed' ? i.state : null);
      if (label && w > label.length * 6.4 + 10) {
        marks.append(s('text', { x: x0 + 6, y: y + (LANE_H - 14) / 2 + 3.5, class: `bar-label${i.state === 'completed' && !i.archived ? '' : ' dark'}` }, label));
      }
    }

    // Instants a rollback undid: they are gone from storage, shown where the rollback says.
    const rollbackLane = this.lanes.indexOf('rollback');
    for (const g of this.ghosts) {
      const t = instantMillis(g.requestedTime);
      if (t === null || rollbackLane < 0) continue;
      const x = this.x(t);
      const y = AXIS_H + rollbackLane * LANE_H + LANE_H / 2;
      const mark = s('g', { class: 'ghost', 'data-testid': 'rolled-back-instant', 'data-requested-time': g.requestedTime },
        s('rect', { x: x - 6, y: y - 6, width: 12, height: 12, rx: 2, class: 'ghost-box' }),
        s('path', { d: `M${x - 3} ${y - 3}L${x + 3} ${y + 3}M${x + 3} ${y - 3}L${x - 3} ${y + 3}`, class: 'ghost-x' }),
        s('title', null, `${g.requestedTime} rolled back by ${g.by}`));
      marks.append(mark);
    }
    svg.append(marks);
    this.chart.replaceChildren(svg);
  }

  private showTip(e: PointerEvent, i: Instant) {
    const start = instantMillis(i.requestedTime);
    const end = instantMillis(i.completionTime);
    replace(
      this.tooltip,
      h('div', { class: 'tip-title' }, h('i', { style: `background:${actionColor(laneOf(i))}` }), i.action, i.requestedAction !== i.action ? ` (${i.requestedAction})` : '', i.operation ? h('b', null, ` · ${i.operation}`) : ''),
      h('div', null, 'requested ', h('code', null, instantLabel(i.requestedTime))),
      i.completionTime ? h('div', null, 'completed ', h('code', null, instantLabel(i.completionTime)), start !== null && end !== null && end >= start ? ` (${ms(end - start)})` : '') : null,
      h('div', { class: 'muted' }, `${i.state}${i.archived ? ' · archived' : ' · active timeline'}`),
    );
    this.tooltip.hidden = false;
    this.moveTip(e);
  }

  private moveTip(e: PointerEvent) {
    const frame = this.chart.getBoundingClientRect();
    const x = Math.min(e.clientX - frame.left + 14, frame.width - 280);
    this.tooltip.style.transform = `translate(${x}px, ${e.clientY - frame.top + 14}px)`;
  }

  private drawList() {
    const rows = [...this.instants].reverse().map((i) => {
      const start = instantMillis(i.requestedTime);
      const end = instantMillis(i.completionTime);
      const tr = h(
        'tr',
        { 'data-testid': 'instant-row', 'data-requested-time': i.requestedTime, class: i.requestedTime === this.selected ? 'selected' : '', onclick: () => this.onSelect(i) },
        h('td', null, h('code', null, i.requestedTime)),
        h('td', null, i.completionTime ? h('code', null, i.completionTime) : '–'),
        h('td', { class: 'num' }, start !== null && end !== null && end >= start && end - start < 86_400_000 ? ms(end - start) : '–'),
        h('td', null, h('span', { class: 'action-chip', style: `--c:${actionColor(laneOf(i))}` }, i.action), i.requestedAction !== i.action ? h('span', { class: 'muted' }, ` ${i.requestedAction}`) : ''),
        h('td', null, h('span', { class: `state state-${i.state}` }, i.state)),
        h('td', null, i.operation ?? h('span', { class: 'muted' }, '–')),
        h('td', null, i.archived ? h('span', { class: 'pill' }, 'archived') : h('span', { class: 'muted' }, 'active')),
      );
      return tr;
    });
    replace(
      this.list,
      h('table', { class: 'grid-table' },
        h('thead', null, h('tr', null, ...['requested', 'completed', 'took', 'action', 'state', 'operation', 'timeline'].map((c) => h('th', null, c)))),
        h('tbody', null, rows)),
    );
  }

  /** Operations arrive after the first drawing: refresh the list and tooltips' data. */
  refresh(instants: Instant[]) {
    this.instants = instants;
    this.placed.forEach((p, n) => (p.instant = instants[n] ?? p.instant));
    this.drawList();
  }
}
