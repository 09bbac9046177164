#!/usr/bin/env node
// What V8 spent on wasm in a Chrome trace (first_rows_chromium.mjs TRACE_OUT=FILE): on the
// page's main thread (lazy compiles, streaming decode, instantiation) and on background
// threads (validation, tier-up), each event name's total ms and count.
//
//   node tests/bench/wasm_trace_summary.mjs TRACE.json
import { readFileSync } from 'node:fs';

const [file] = process.argv.slice(2);
if (!file) {
  console.error('usage: wasm_trace_summary.mjs TRACE.json');
  process.exit(2);
}
const trace = JSON.parse(readFileSync(file, 'utf8'));
const events = trace.traceEvents ?? trace;
const threadNames = new Map(events.filter((e) => e.ph === 'M' && e.name === 'thread_name').map((e) => [`${e.pid}:${e.tid}`, e.args.name]));
const totals = new Map();
for (const e of events) {
  if (e.ph !== 'X' || !/^(v8\.)?wasm\./.test(e.name)) continue;
  const thread = threadNames.get(`${e.pid}:${e.tid}`) ?? '';
  const where = thread === 'CrRendererMain' ? 'main thread' : thread.startsWith('ThreadPool') ? 'background' : thread || 'other';
  const key = `${where}\t${e.name}`;
  const t = totals.get(key) ?? { ms: 0, n: 0 };
  t.ms += (e.dur ?? 0) / 1000;
  t.n += 1;
  totals.set(key, t);
}
for (const [key, { ms, n }] of [...totals].sort((a, b) => b[1].ms - a[1].ms)) {
  if (ms >= 0.5) console.log(`${ms.toFixed(1).padStart(8)} ms ${String(n).padStart(6)}×  ${key}`);
}
