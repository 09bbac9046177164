// Runs before `npm pack` and `npm publish` alike: the tarball holds what was built, and only
// a module wasm-opt has shrunk (`npm run build:publish`) unless the pack is a test one
// (HUDI_EDGE_PACK_UNOPTIMIZED=1, as the tests pack it).
import { existsSync } from 'node:fs';

const fail = (m) => {
  console.error(`npm pack: ${m}`);
  process.exit(1);
};
if (!existsSync('dist/node.js') || !existsSync('dist/wasm/hudi_edge_bg.wasm') || !existsSync('dist/wasm/hudi_edge_read_bg.wasm')) fail('no dist/: run npm run build:publish first');
if (!existsSync('dist/wasm/.wasm-opt') && process.env.HUDI_EDGE_PACK_UNOPTIMIZED !== '1') {
  fail('dist/ holds a module without wasm-opt: run npm run build:publish first (or set HUDI_EDGE_PACK_UNOPTIMIZED=1 for a test pack)');
}
