// The viewer: open a table (URL, S3 bucket, local folder, .zip, a sample), then show it —
// overview, timeline, instant detail, file layout, data with its plan, the changes of a commit, SQL. Everything runs
// in the page; tables are read straight from their storage.

import './style.css';
import { tableToIPC } from 'apache-arrow';
import { HudiTable, discover, type CommitDetail, type DiscoverOptions, type Instant, type TableInfo } from 'hudi-edge';
import { $, h, replace, s } from './dom';
import { bytes, count, ms, plural } from './format';
import { ChangesPanel } from './panels/changes';
import { commitView, errorView, metadataTableView, schemaChangeView } from './panels/commit';
import { DataPanel } from './panels/data';
import { layoutView, type Pending } from './panels/layout';
import { overviewView } from './panels/overview';
import { bucketView, healthView } from './panels/health';
import { TimelineView, type RolledBack } from './panels/timeline';
import type { SqlSource } from './panels/sql';

interface Sample {
  id: string;
  title: string;
  kind: string;
  about: string;
  zip: string;
  table: string;
  bytes: number;
  /** Set when the server also serves the table unzipped (`.ci/demo`): opened by URL then. */
  url?: string;
}

/** Timings for the benchmark and tests: performance marks and the table in use. */
declare global {
  interface Window {
    hudiViewer: { table: HudiTable | null; timings: Record<string, number>; instants: Instant[] };
  }
}
window.hudiViewer = { table: null, timings: {}, instants: [] };

const main = $('#main')!;
const urlInput = $<HTMLInputElement>('#table-url')!;
let current: { table: HudiTable; controller: AbortController } | null = null;
/** Whether the shown table's timeline is polled (kept across redraws). */
let polling = false;
const POLL_MS = 5000;
/** Actions whose commit metadata records a write (files and the writer's schema). */
const WRITES = ['commit', 'deltacommit', 'replacecommit'];
let samples: Sample[] = [];

async function loadSamples(): Promise<Sample[]> {
  try {
    const r = await fetch('samples/index.json');
    if (!r.ok) return [];
    const list = (await r.json()) as Sample[];
    return list.map((s) => ({ ...s, url: s.url ? new URL(s.url, location.href).toString() : undefined }));
  } catch {
    return [];
  }
}

// ---------------------------------------------------------------------------------------
// Start page

function startPage() {
  document.title = 'hudi-edge viewer';
  window.hudiViewer.table = null;
  replace(
    main,
    h('section', { class: 'hero' },
      h('h1', null, 'Look inside an Apache Hudi table'),
      h('p', { class: 'lead' }, 'Timeline, file layout, data and query plans of Hudi tables (versions 6, 8 and 9; Copy-On-Write and Merge-On-Read), read straight from storage by WebAssembly in this page.'),
      h('div', { class: 'ways' },
        h('div', null, h('b', null, 'By URL'), h('span', null, 'paste an http(s):// or s3:// table URL above')),
        h('div', null, h('b', null, 'From an S3 bucket'), h('span', null, 'with credentials or presigned URLs')),
        h('div', null, h('b', null, 'From this computer'), h('span', null, 'pick or drop a table folder or a .zip')))),
    h('section', { class: 'samples' },
      h('h2', null, 'Sample tables'),
      h('p', { class: 'muted' }, 'Real tables written by Apache Hudi Spark, bundled with the viewer.'),
      samples.length
        ? h('div', { class: 'sample-grid' }, samples.map((s) =>
            h('button', { type: 'button', class: 'sample', 'data-testid': 'sample', 'data-sample': s.id, onclick: () => openSample(s) },
              h('div', { class: 'sample-title' }, s.title, h('span', { class: `badge ${s.kind.startsWith('Merge') ? 'mor' : 'cow'}` }, s.kind)),
              h('p', null, s.about),
              h('code', { class: 'muted' }, s.table))))
        : h('p', { class: 'muted' }, 'No samples in this build.')),
  );
}

// ---------------------------------------------------------------------------------------
// Opening

function setQueryParam(key: 'table' | 'sample' | null, value?: string) {
  const u = new URL(location.href);
  u.searchParams.delete('table');
  u.searchParams.delete('sample');
  if (key && value) u.searchParams.set(key, value);
  if (u.toString() !== location.href) history.pushState(null, '', u);
}

async function openSample(s: Sample) {
  if (s.url) {
    urlInput.value = s.url;
    setQueryParam('table', s.url);
    return openTable(s.url, (signal) => HudiTable.open(s.url!, { signal }));
  }
  setQueryParam('sample', s.id);
  urlInput.value = '';
  return openTable(`sample: ${s.title} (${s.kind})`, async () => {
    const r = await fetch(s.zip);
    if (!r.ok) throw Object.assign(new Error(`sample ${s.zip}: HTTP ${r.status}`), { code: 'NOT_FOUND' });
    return HudiTable.openZip(new Uint8Array(await r.arrayBuffer()), `${s.table.split('/').at(-1)}.zip`);
  });
}

function openUrl(url: string) {
  setQueryParam('table', url);
  return openTable(url, (signal, onProgress) => HudiTable.open(url, { signal, onProgress }));
}

type Opener = (signal: AbortSignal, onProgress: (p: { requests: number; bytes: number }) => void) => Promise<HudiTable>;

/** How the shown table was opened (Reload and the poll open it again). */
let lastOpen: { label: string; opener: Opener } | null = null;
/** Every table opened in this page, by name: SQL can name them. */
const opened = new Map<string, { label: string; opener: Opener }>();

async function openTable(label: string, opener: Opener) {
  lastOpen = { label, opener };
  current?.controller.abort();
  current?.table.close();
  current = null;
  const controller = new AbortController();
  const timings: Record<string, number> = {};
  window.hudiViewer.timings = timings;
  delete document.body.dataset.ready;
  delete document.body.dataset.timelineDrawn;
  const t0 = performance.now();
  performance.mark('hudi:open-start');
  const progress = h('span', null, 'opening…');
  replace(main, h('div', { class: 'loading' }, h('div', { class: 'spinner' }), h('div', null, h('b', null, label), h('div', { class: 'muted' }, progress))));
  let table: HudiTable;
  try {
    table = await opener(controller.signal, (p) => replace(progress, `${count(p.requests)} requests · ${bytes(p.bytes)}`));
  } catch (e) {
    if (controller.signal.aborted) return;
    replace(main, h('section', { class: 'card' }, errorView(e, `Could not open ${label}`)));
    return;
  }
  if (controller.signal.aborted) {
    table.close();
    return;
  }
  timings.opened = performance.now() - t0;
  current = { table, controller };
  window.hudiViewer.table = table;
  await showTable(table, label, controller.signal, t0, timings);
}

// ---------------------------------------------------------------------------------------
// The table

const card = (id: string, title: string | Node, ...children: (Node | null)[]) =>
  h('section', { class: 'card', id }, h('header', { class: 'card-head' }, h('h2', null, title)), ...children);

async function showTable(table: HudiTable, label: string, signal: AbortSignal, t0: number, timings: Record<string, number>) {
  const overview = h('div', { class: 'card overview skeleton' }, h('h2', null, label), h('p', { class: 'muted' }, 'reading the file layout…'));
  const timelineCount = h('span', { class: 'count' });
  const archivedToggle = h('button', { type: 'button', class: 'small-btn', 'data-testid': 'load-archived' }, 'Load archived timeline');
  const detail = h('div', { class: 'detail-slot' });
  const timeline = new TimelineView((i) => selectInstant(i));
  timeline.addTool(archivedToggle);
  // Writers may commit while the table is shown: Reload reads the timeline again; the poll
  // does so every 5 s and redraws when an instant appeared or changed state.
  const reloadButton = h('button', { type: 'button', class: 'small-btn', 'data-testid': 'reload' }, 'Reload');
  const pollBox = h('input', { type: 'checkbox', 'data-testid': 'poll' }) as HTMLInputElement;
  pollBox.checked = polling;
  timeline.addTool(reloadButton);
  timeline.addTool(h('label', { class: 'small-btn poll' }, pollBox, ' poll'));
  const signature = (list: Instant[]) => list.map((i) => `${i.requestedTime}.${i.action}.${i.state}`).join();
  // Opened anew (not `refresh()`): a host without listing serves a manifest, read once per open.
  const reopen = () => lastOpen && openTable(lastOpen.label, lastOpen.opener);
  reloadButton.addEventListener('click', () => {
    reloadButton.disabled = true;
    void reopen();
  });
  pollBox.addEventListener('change', () => {
    polling = pollBox.checked;
    schedulePoll();
  });
  let pollTimer: ReturnType<typeof setTimeout> | undefined;
  function schedulePoll() {
    clearTimeout(pollTimer);
    if (!polling || signal.aborted) return;
    pollTimer = setTimeout(async () => {
      if (signal.aborted || !main.contains(pollBox)) return;
      try {
        const fresh = lastOpen && (await lastOpen.opener(signal, () => {}));
        if (fresh) {
          const now = await fresh.timeline({ operations: false, signal }).finally(() => fresh.close());
          if (signature(now) !== signature(instants)) return void (await reopen());
        }
      } catch {
        // The next poll tries again.
      }
      schedulePoll();
    }, POLL_MS);
  }
  signal.addEventListener('abort', () => clearTimeout(pollTimer));
  const layoutSlot = h('div', null, h('p', { class: 'muted' }, 'reading the file layout…'));
  const dataSlot = h('div', null, h('p', { class: 'muted' }, 'waiting for the table…'));
  const changesSlot = h('div', null, h('p', { class: 'muted' }, 'waiting for the table…'));
  /** The Changes card, once the table's properties are known (CDC or not). */
  let resolveChanges: (p: ChangesPanel) => void = () => {};
  const changesPanel = new Promise<ChangesPanel>((r) => (resolveChanges = r));
  const healthSlot = h('div', null, h('p', { class: 'muted' }, 'waiting for the file layout…'));
  // SQL (DuckDB-wasm) is loaded only when this card is opened: from its button or the nav link.
  const sqlOpen = h('button', { type: 'button', class: 'small-btn', 'data-testid': 'sql-open', disabled: true }, 'Open SQL (loads DuckDB)');
  const sqlSlot = h('div', null, sqlOpen);
  const ioLine = h('div', { class: 'io-line muted', 'data-testid': 'io' });

  replace(
    main,
    h('nav', { class: 'jump' }, ...[['overview', 'Overview'], ['timeline', 'Timeline'], ['files', 'File layout'], ['health', 'Health'], ['changes', 'Changes'], ['data', 'Data'], ['sql', 'SQL']].map(([id, t]) => h('a', { href: `#${id}` }, t)), ioLine),
    h('div', { id: 'overview' }, overview),
    card('timeline', h('span', null, 'Timeline ', timelineCount), timeline.el, detail),
    card('files', 'File layout', layoutSlot),
    card('health', 'Health', healthSlot),
    card('changes', 'Changes', changesSlot),
    card('data', 'Data', dataSlot),
    card('sql', 'SQL', sqlSlot),
  );
  document.title = `${label} · hudi-edge viewer`;

  const refreshIo = () => {
    try {
      const io = table.io();
      replace(ioLine, `${count(io.requests)} requests · ${bytes(io.bytes)} · opened in ${ms(timings.opened ?? 0)}`);
    } catch {
      /* closed */
    }
  };

  let instants: Instant[] = [];
  const commits = new Map<string, Promise<CommitDetail>>();
  const commitOf = (rt: string) => {
    if (!commits.has(rt)) commits.set(rt, table.commit(rt, { signal }));
    return commits.get(rt)!;
  };

  /** The commit detail of the write completed last before `i` that carries a schema (the
   *  schema `i`'s writer started from), looking back at most three writes. */
  async function previousSchema(i: Instant): Promise<CommitDetail | null> {
    const done = (x: Instant) => x.completionTime ?? x.requestedTime;
    const earlier = instants
      .filter((x) => x.state === 'completed' && WRITES.includes(x.action) && done(x) < done(i))
      .sort((a, b) => (done(a) < done(b) ? 1 : -1))
      .slice(0, 3);
    for (const x of earlier) {
      const d = await commitOf(x.requestedTime).catch(() => null);
      if (d?.schema) return d;
    }
    return null;
  }

  async function selectInstant(i: Instant) {
    timeline.select(i.requestedTime);
    replace(detail, h('div', { class: 'card commit loading-inline' }, h('div', { class: 'spinner small' }), `reading ${i.requestedTime}.${i.action}…`));
    try {
      const d = await commitOf(i.requestedTime);
      const view = commitView(d, () => {
        timeline.select(null);
        replace(detail);
      });
      replace(detail, view);
      if (WRITES.includes(i.action) && i.state === 'completed') {
        const show = async () => {
          const panel = await changesPanel;
          $('#changes')?.scrollIntoView({ block: 'start', behavior: 'smooth' });
          await panel.showCommit(i);
          refreshIo();
        };
        view.querySelector('.card-head > h3')?.after(h('button', { type: 'button', class: 'small-btn', 'data-testid': 'show-changes', onclick: () => void show() }, 'Changes of this commit'));
      }
      if (WRITES.includes(i.action)) {
        const files = await table.metadataTableFiles(i.requestedTime, { signal }).catch(() => null);
        if (files && detail.contains(view)) view.append(metadataTableView(files));
        const before = d.schema ? await previousSchema(i) : null;
        const change = before && schemaChangeView(before, d);
        if (change && detail.contains(view)) view.append(change);
      }
      detail.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
    } catch (e) {
      replace(detail, errorView(e, `Could not read instant ${i.requestedTime}`));
    }
    refreshIo();
  }

  const drawTimeline = (list: Instant[]) => {
    instants = list;
    window.hudiViewer.instants = list;
    replace(timelineCount, `${plural(list.length, 'instant')}`);
    timeline.set(list);
  };

  // 1. The timeline is known once the table is open: draw it first.
  try {
    drawTimeline(await table.timeline({ operations: false, signal }));
  } catch (e) {
    replace(timeline.el, errorView(e, 'Could not read the timeline'));
    return;
  }
  await new Promise((r) => requestAnimationFrame(() => r(null)));
  timings.timelineDrawn = performance.now() - t0;
  timings.requestsAtTimeline = table.io().requests;
  performance.mark('hudi:timeline-drawn');
  document.body.dataset.timelineDrawn = 'yes';
  refreshIo();
  schedulePoll();

  archivedToggle.addEventListener('click', async () => {
    archivedToggle.disabled = true;
    archivedToggle.textContent = 'Loading archived…';
    try {
      const all = await table.timeline({ archived: true, signal });
      drawTimeline(all);
      archivedToggle.textContent = all.some((i) => i.archived) ? `${plural(all.filter((i) => i.archived).length, 'archived instant')} loaded` : 'No archived instants';
      void fillOperations(all);
    } catch (e) {
      archivedToggle.textContent = 'Archived timeline failed';
      archivedToggle.title = (e as Error).message;
    }
    refreshIo();
  });

  // 2. Operations and rollbacks (one small read per instant), the overview and file layout, the data.
  const fillOperations = async (list: Instant[]) => {
    const withOps = await table.timeline({ archived: list.some((i) => i.archived), signal }).catch(() => null);
    if (withOps && withOps.length === list.length) {
      instants = withOps;
      window.hudiViewer.instants = withOps;
      timeline.refresh(withOps);
    }
    const ghosts: RolledBack[] = [];
    await Promise.all(
      list.filter((i) => i.action === 'rollback' && i.state === 'completed').map(async (i) => {
        const raw = (await commitOf(i.requestedTime).catch(() => null))?.raw as Record<string, unknown> | null;
        const undone = [...((raw?.commitsRollback as string[]) ?? []), ...(((raw?.instantsRollback as { commitTime?: string }[]) ?? []).map((x) => x.commitTime ?? ''))];
        for (const rt of new Set(undone.filter(Boolean))) ghosts.push({ requestedTime: rt, by: i.requestedTime });
      }),
    );
    if (ghosts.length) timeline.setRolledBack(ghosts);
    refreshIo();
  };

  const layoutWork = (async () => {
    const [info, layout, writers] = await Promise.all([table.info({ signal }), table.fileGroups({ signal }), table.writers({ signal }).catch(() => null)]);
    replace(overview, overviewView(info, layout, instants, table.location, writers));
    overview.className = '';
    const pending = await pendingWork(instants);
    replace(layoutSlot, layoutView(layout, info.properties, pending));
    timings.layoutDrawn = performance.now() - t0;
    refreshIo();
    void showHealth();
    return info;
  })();

  // After the layout: the report lists the partitions again, and should not delay it.
  async function showHealth() {
    try {
      const report = await table.health({ signal });
      const readOnly = 'this table was opened read-only (plain HTTP(S), a .zip or files picked from this computer); open it over S3 with credentials, or in Node by path, to run table services';
      const fix = table.writable
        ? async () => {
            const done = await table.fix({ signal });
            void reopen();
            return done;
          }
        : null;
      replace(healthSlot, healthView(report, fix, readOnly));
      timings.healthDrawn = performance.now() - t0;
      refreshIo();
    } catch (e) {
      if (!signal.aborted) replace(healthSlot, errorView(e, 'Could not compute the health report'));
    }
  }

  async function pendingWork(list: Instant[]): Promise<Pending[]> {
    const out: Pending[] = [];
    for (const i of list.filter((x) => x.state !== 'completed' && ['compaction', 'clustering', 'logcompaction'].includes(x.requestedAction))) {
      const raw = (await commitOf(i.requestedTime).catch(() => null))?.raw as Record<string, any> | null;
      const ids = new Set<string>();
      for (const op of raw?.operations ?? []) if (op?.fileId) ids.add(op.fileId);
      for (const g of raw?.clusteringPlan?.inputGroups ?? []) for (const sl of g?.slices ?? []) if (sl?.fileId) ids.add(sl.fileId);
      out.push({ instant: i, kind: i.requestedAction, fileIds: ids });
    }
    return out;
  }

  void fillOperations(instants);
  let info: TableInfo;
  try {
    info = await layoutWork;
  } catch (e) {
    if (signal.aborted) return;
    replace(overview, errorView(e, 'Could not read the table'));
    replace(layoutSlot, errorView(e, 'Could not read the file layout'));
    replace(dataSlot, h('p', { class: 'muted' }, 'The data cannot be read.'));
    return;
  }

  const changes = new ChangesPanel(table, info, instants);
  replace(changesSlot, changes.el);
  resolveChanges(changes);

  // The name SQL knows the table by: its hoodie.table.name as an identifier (`t` too).
  const name = (info.properties['hoodie.table.name'] ?? '').replace(/\W+/g, '_').replace(/^(?=\d)/, '_') || 't';
  if (lastOpen) opened.set(name, lastOpen);
  const openSql = async () => {
    if (sqlOpen.disabled) return;
    sqlOpen.disabled = true;
    sqlOpen.textContent = 'loading…';
    try {
      const { SqlPanel } = await import('./panels/sql');
      const sources = (): SqlSource[] => [
        { name, label: 'open', table: async () => table },
        ...(name === 't' ? [] : [{ name: 't', label: `= ${name}`, table: async () => table }]),
        ...[...opened].filter(([n]) => n !== name && n !== 't').map(([n, o]) => ({ name: n, label: o.label, table: () => o.opener(signal, () => {}) })),
      ];
      const panel = new SqlPanel({ h, s, replace, bytes, count, ms, errorView, tableToIPC }, sources, `SELECT * FROM ${name} LIMIT 100`);
      signal.addEventListener('abort', () => panel.close());
      replace(sqlSlot, panel.el);
    } catch (e) {
      replace(sqlSlot, errorView(e, 'Could not load SQL'));
    }
  };
  sqlOpen.addEventListener('click', () => void openSql());
  sqlOpen.disabled = false;
  // Scrolled to, not navigated to: a fragment navigation fires popstate, which routes anew.
  $('nav.jump a[href="#sql"]')?.addEventListener('click', (e) => {
    e.preventDefault();
    $('#sql')?.scrollIntoView({ block: 'start' });
    void openSql();
  });

  const data = new DataPanel(table, info, instants);
  replace(dataSlot, data.el);
  // Columns from the latest write's schema (meta columns first when the table has them).
  const lastWrite = [...instants].reverse().find((i) => i.state === 'completed' && ['commit', 'deltacommit', 'replacecommit'].includes(i.action));
  if (lastWrite) {
    const d = await commitOf(lastWrite.requestedTime).catch(() => null);
    const fields = d?.schema?.map((f) => f.name) ?? [];
    const meta = info.populateMetaFields ? ['_hoodie_commit_time', '_hoodie_commit_seqno', '_hoodie_record_key', '_hoodie_partition_path', '_hoodie_file_name'] : [];
    if (fields.length) data.setColumns([...meta.filter((m) => !fields.includes(m)), ...fields]);
  }
  await data.run();
  timings.dataShown = performance.now() - t0;
  performance.mark('hudi:rows-shown');
  refreshIo();
  document.body.dataset.ready = 'yes';
}

// ---------------------------------------------------------------------------------------
// S3, local folders, zips, drag and drop

function s3Dialog() {
  const field = (name: string, label: string, attrs: Record<string, unknown> = {}) =>
    h('label', { class: 'field' }, h('span', null, label), h('input', { name, spellcheck: 'false', autocomplete: 'off', ...attrs }));
  const form = h('form', { method: 'dialog', class: 's3-form' },
    h('h2', null, 'Open a table in an S3 bucket'),
    field('url', 'Table', { placeholder: 's3://bucket/path/to/table', required: true, value: urlInput.value.startsWith('s3://') ? urlInput.value : '' }),
    field('endpoint', 'Endpoint (S3-compatible stores)', { placeholder: 'https://s3.us-east-1.amazonaws.com' }),
    field('region', 'Region', { placeholder: 'us-east-1' }),
    h('fieldset', null, h('legend', null, 'Credentials (kept in this page only)'),
      field('accessKeyId', 'Access key id'),
      field('secretAccessKey', 'Secret access key', { type: 'password' }),
      field('sessionToken', 'Session token (optional)', { type: 'password' })),
    h('fieldset', null, h('legend', null, 'or presigned URLs'),
      field('presignUrl', 'Presign service', { placeholder: 'https://your.server/presign  (GET ?method=&key=[&delimiter=&continuationToken=] → URL)' })),
    h('label', { class: 'check' }, h('input', { type: 'checkbox', name: 'forcePathStyle' }), ' path-style URLs (MinIO, moto, …)'),
    h('label', { class: 'check' }, h('input', { type: 'checkbox', name: 'discover', 'data-testid': 's3-discover' }), ' find every table under this prefix'),
    h('div', { class: 'dialog-actions' }, h('button', { value: 'cancel', formnovalidate: true }, 'Cancel'), h('button', { value: 'open', class: 'primary' }, 'Open')));
  const dialog = h('dialog', { class: 'dialog' }, form);
  document.body.append(dialog);
  dialog.addEventListener('close', () => {
    dialog.remove();
    if (dialog.returnValue !== 'open') return;
    const v = Object.fromEntries(new FormData(form)) as Record<string, string>;
    const s3 = {
      ...(v.region ? { region: v.region } : {}),
      ...(v.endpoint ? { endpoint: v.endpoint } : {}),
      ...(v.accessKeyId ? { accessKeyId: v.accessKeyId, secretAccessKey: v.secretAccessKey } : {}),
      ...(v.sessionToken ? { sessionToken: v.sessionToken } : {}),
      forcePathStyle: v.forcePathStyle === 'on',
    };
    const service = v.presignUrl;
    const presign = service
      ? async (method: string, key: string, page?: { delimiter?: string; continuationToken?: string }) => {
          const q = new URLSearchParams({ method, key, ...(page?.delimiter ? { delimiter: page.delimiter } : {}), ...(page?.continuationToken ? { continuationToken: page.continuationToken } : {}) });
          const r = await fetch(`${service}${service.includes('?') ? '&' : '?'}${q}`);
          if (!r.ok) throw Object.assign(new Error(`presign: HTTP ${r.status}`), { code: r.status === 403 ? 'ACCESS_DENIED' : 'IO' });
          return (await r.text()).trim();
        }
      : undefined;
    urlInput.value = v.url!;
    if (v.discover === 'on') {
      const opts = { s3, ...(presign ? { presign } : {}) };
      return void showBucket(v.url!, opts, (where) => openTable(where, (signal, onProgress) => HudiTable.open(where, { ...opts, signal, onProgress })));
    }
    setQueryParam(null);
    void openTable(v.url!, (signal, onProgress) => HudiTable.open(v.url!, { s3, ...(presign ? { presign } : {}), signal, onProgress }));
  });
  dialog.showModal();
}

function openLocalFiles(files: { path: string; data: File; lastModified: number }[], label: string) {
  setQueryParam(null);
  urlInput.value = '';
  const zip = files.length === 1 && files[0]!.path.toLowerCase().endsWith('.zip') ? files[0]! : null;
  if (zip) return openTable(zip.data.name, async () => HudiTable.openZip(zip.data, zip.data.name));
  return openTable(label, (signal, onProgress) => HudiTable.openFiles(files, { signal, onProgress }));
}

async function entriesOf(items: DataTransferItemList) {
  const out: { path: string; data: File; lastModified: number }[] = [];
  const walk = async (entry: FileSystemEntry, prefix: string): Promise<void> => {
    if (entry.isFile) {
      const file = await new Promise<File>((res, rej) => (entry as FileSystemFileEntry).file(res, rej));
      out.push({ path: `${prefix}${entry.name}`, data: file, lastModified: file.lastModified });
    } else if (entry.isDirectory) {
      const reader = (entry as FileSystemDirectoryEntry).createReader();
      for (;;) {
        const batch = await new Promise<FileSystemEntry[]>((res, rej) => reader.readEntries(res, rej));
        if (!batch.length) break;
        for (const e of batch) await walk(e, `${prefix}${entry.name}/`);
      }
    }
  };
  const roots = [...items].map((i) => i.webkitGetAsEntry()).filter((e): e is FileSystemEntry => Boolean(e));
  for (const r of roots) await walk(r, '');
  return { files: out, label: roots.map((r) => r.name).join(', ') };
}

function wireOpeners() {
  $('#open-form')!.addEventListener('submit', (e) => {
    e.preventDefault();
    const url = urlInput.value.trim();
    if (!url) return;
    void openUrl(url);
  });
  $('#open-s3')!.addEventListener('click', s3Dialog);
  const folder = $<HTMLInputElement>('#folder-input')!;
  const zip = $<HTMLInputElement>('#zip-input')!;
  $('#open-folder')!.addEventListener('click', () => folder.click());
  $('#open-zip')!.addEventListener('click', () => zip.click());
  folder.addEventListener('change', () => {
    const files = [...(folder.files ?? [])].map((f) => ({ path: f.webkitRelativePath || f.name, data: f, lastModified: f.lastModified }));
    if (files.length) void openLocalFiles(files, files[0]!.path.split('/')[0] ?? 'folder');
    folder.value = '';
  });
  zip.addEventListener('change', () => {
    const f = zip.files?.[0];
    if (f) void openLocalFiles([{ path: f.name, data: f, lastModified: f.lastModified }], f.name);
    zip.value = '';
  });
  const overlay = $('#drop-overlay')!;
  let depth = 0;
  window.addEventListener('dragenter', (e) => {
    if (!e.dataTransfer?.types.includes('Files')) return;
    depth++;
    overlay.hidden = false;
  });
  window.addEventListener('dragleave', () => {
    if (--depth <= 0) overlay.hidden = true;
  });
  window.addEventListener('dragover', (e) => e.preventDefault());
  window.addEventListener('drop', async (e) => {
    e.preventDefault();
    depth = 0;
    overlay.hidden = true;
    if (!e.dataTransfer) return;
    const { files, label } = await entriesOf(e.dataTransfer.items);
    if (files.length) void openLocalFiles(files, label);
  });
}

// ---------------------------------------------------------------------------------------
// Every table under a prefix

async function showBucket(where: string, options: DiscoverOptions, open: (location: string) => void) {
  current?.controller.abort();
  current?.table.close();
  current = null;
  document.title = `${where} · hudi-edge viewer`;
  replace(main, h('p', { class: 'muted', 'data-testid': 'bucket-loading' }, `looking for tables under ${where}…`));
  try {
    const found = await discover(where, options);
    replace(main, bucketView(found, (t) => open(t.location)));
    document.body.dataset.ready = 'yes';
  } catch (e) {
    replace(main, errorView(e, `Could not list ${where}`));
  }
}

// ---------------------------------------------------------------------------------------
// Routing: ?table=URL opens a table, ?bucket=URL lists the tables under it, ?sample=ID a
// sample, nothing the start page.

async function route() {
  const params = new URL(location.href).searchParams;
  const table = params.get('table');
  const sample = params.get('sample');
  const bucket = params.get('bucket');
  if (bucket && !table) {
    urlInput.value = bucket;
    return showBucket(bucket, {}, (where) => openUrl(where));
  }
  if (table) {
    urlInput.value = table;
    return openTable(table, (signal, onProgress) => HudiTable.open(table, { signal, onProgress }));
  }
  await samplesLoaded;
  const s = sample ? samples.find((x) => x.id === sample) : undefined;
  if (s) return openSample(s);
  current?.controller.abort();
  current?.table.close();
  current = null;
  startPage();
}

wireOpeners();
window.addEventListener('popstate', () => void route());
// Asked for at once, awaited only where the samples are shown: a table opened by URL starts
// without waiting for their list.
const samplesLoaded = loadSamples().then((list) => {
  samples = list;
});
await route();
