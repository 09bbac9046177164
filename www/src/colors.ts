// One colour per action, used by the timeline, its legend and the commit detail.
export const ACTION_COLORS: Record<string, string> = {
  commit: '#2563eb',
  deltacommit: '#0891b2',
  replacecommit: '#7c3aed',
  clustering: '#9333ea',
  compaction: '#16a34a',
  logcompaction: '#65a30d',
  clean: '#64748b',
  rollback: '#dc2626',
  savepoint: '#d97706',
  restore: '#db2777',
  indexing: '#0d9488',
  schemacommit: '#a16207',
};

export const actionColor = (action: string) => ACTION_COLORS[action] ?? '#475569';

/** The lane an instant is drawn in: what it was requested as (a finished compaction stays a compaction). */
export const laneOf = (i: { action: string; requestedAction: string }) => i.requestedAction || i.action;
