#!/usr/bin/env node
// Where a V8 CPU profile's time went: self time by kind (wasm, the package's JS, its
// dependencies, Node's internals, GC, compile, idle) and the functions with the most time
// inclusive of what they called. Names are those of the profile: a wasm module built with
// its name section names Rust functions.
//
//   PROFILE=/tmp/cold.cpuprofile node tests/bench/wasm_node.mjs first-rows-pkg TABLE FILTER 20
//   node tests/bench/cpuprofile_summary.mjs /tmp/cold.cpuprofile [PATTERN] [ROWS]
//
// PATTERN (a regular expression) keeps the inclusive rows whose name matches it.
import { readFileSync } from 'node:fs';

const [file, pattern = '', rows = '40'] = process.argv.slice(2);
if (!file) {
  console.error('usage: cpuprofile_summary.mjs PROFILE [PATTERN] [ROWS]');
  process.exit(2);
}
const profile = JSON.parse(readFileSync(file, 'utf8'));
const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
// Rust's symbol hashes and crate disambiguators only split one function into many rows.
const nameOf = (n) => n.callFrame.functionName.replace(/::h[0-9a-f]{16}$/, '').replace(/\[[0-9a-f]{16}\]/g, '') || '(anonymous)';
function kindOf(n) {
  const { url, functionName } = n.callFrame;
  if (url.startsWith('wasm')) return 'wasm';
  if (!url) return functionName || '(native)';
  if (url.startsWith('node:')) return 'Node (JS)';
  return url.includes('node_modules') ? 'JS dependencies' : 'JS';
}

const self = new Map();
const inclusive = new Map();
let total = 0;
profile.samples.forEach((id, i) => {
  // A sample's weight is the time until the next one.
  const ms = (profile.timeDeltas[i + 1] ?? 0) / 1000;
  total += ms;
  const kind = kindOf(nodes.get(id));
  self.set(kind, (self.get(kind) ?? 0) + ms);
  const seen = new Set();
  for (let at = id; at; at = parent.get(at)) {
    const name = nameOf(nodes.get(at));
    if (seen.has(name)) continue;
    seen.add(name);
    inclusive.set(name, (inclusive.get(name) ?? 0) + ms);
  }
});

const fmt = (ms) => ms.toFixed(1).padStart(7);
console.log(`${fmt(total)} ms sampled\n\nself time by kind:`);
for (const [kind, ms] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 15)) console.log(`${fmt(ms)}  ${kind}`);
console.log('\ninclusive:');
const keep = new RegExp(pattern);
for (const [name, ms] of [...inclusive].filter(([n]) => keep.test(n) && n !== '(root)').sort((a, b) => b[1] - a[1]).slice(0, Number(rows))) {
  console.log(`${fmt(ms)}  ${name.slice(0, 160)}`);
}
