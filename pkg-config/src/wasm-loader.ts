// The engine comes as two wasm modules built from the same sources: the read module (open,
// plan, scan, merge, change feed, health, discovery) and the full module (the same plus
// writes and table services, with the Parquet, Avro and HFile writers). Reads
// load only the read module; the first call that needs the full one loads it, and from then
// on tables open in it. Each entry point (browser.ts, node.ts, workerd.ts) registers where
// the modules come from and may start compiling the read module as soon as it is imported.

import initRead, * as readGlue from './wasm/hudi_edge_read.js';
import initFull, * as fullGlue from './wasm/hudi_edge.js';
import { toHudiError } from './errors.js';

/** Anything wasm-bindgen's init accepts: a compiled module, bytes, a URL or a Response. */
export type WasmInput = WebAssembly.Module | BufferSource | URL | string | Response;

type Source = () => WasmInput | Promise<WasmInput>;

/** @internal One instantiated module: its bindings (the read module's are a subset of the full one's:
 *  typed as the full one's, its write methods are never called) and its memory. */
export interface Engine {
  WasmTable: typeof fullGlue.WasmTable;
  WasmMdtCache: typeof fullGlue.WasmMdtCache;
  discoverTables: typeof fullGlue.discoverTables;
  discoverJs: typeof fullGlue.discoverJs;
  /** Writes and table services: only the full module has them. */
  full: boolean;
  memory: WebAssembly.Memory;
}

let sources: { read?: Source; full?: Source } = {};
/** Whether a compiled module is instantiated synchronously (the Node entry). */
let instantiateSync = false;
let readReady: Promise<Engine> | undefined;
let fullReady: Promise<Engine> | undefined;
let fullLoaded: Engine | undefined;
const loaded: Engine[] = [];

/** @internal Used by the entry points: where each module comes from when `initWasm` is given nothing
 *  (no `read`: the full module serves reads too). */
export function setWasmSources(s: { read?: Source; full: Source; sync?: boolean }) {
  sources = { read: s.read, full: s.full };
  instantiateSync = s.sync ?? false;
}

/** `WebAssembly.compileStreaming` where the response allows it (a `application/wasm` type),
 *  else compiled from its bytes. */
async function compileResponse(r: Response): Promise<WebAssembly.Module> {
  if (!r.ok) throw new Error(`loading the wasm module: HTTP ${r.status} ${r.url}`);
  if (typeof WebAssembly.compileStreaming === 'function' && r.headers.get('content-type')?.startsWith('application/wasm')) {
    return WebAssembly.compileStreaming(r);
  }
  return WebAssembly.compile(await r.arrayBuffer());
}

/** Compiles what a source gives (already compiled modules pass through). Bytes are tested
 *  before `Response`: Node loads its fetch (undici, 10-20 ms) on the global's first touch. */
async function compile(input: WasmInput): Promise<WebAssembly.Module> {
  if (input instanceof WebAssembly.Module) return input;
  if (input instanceof ArrayBuffer || ArrayBuffer.isView(input)) return WebAssembly.compile(input);
  if (typeof Response !== 'undefined' && input instanceof Response) return compileResponse(input);
  if (typeof input === 'string' || input instanceof URL) return compileResponse(await fetch(input));
  throw new TypeError('hudi-edge: a wasm module is given as a WebAssembly.Module, bytes, a URL or a Response');
}

/** Whether a compiled module is the full one (it exports the handle's `write`). */
const isFull = (m: WebAssembly.Module) => WebAssembly.Module.exports(m).some((e) => e.name === 'wasmtable_write');

/** A compiled module instantiated synchronously (the Node entry): V8's asynchronous
 *  instantiation took 25-30 ms longer there than the synchronous one (2-4 ms: functions
 *  compile lazily), and a cold open's first requests wait for it. In Chromium the two measured
 *  the same, so browsers keep the asynchronous one. Undefined where the host refuses it (a
 *  RangeError: hosts may limit synchronous instantiation). */
function instantiateNow(full: boolean, module: WebAssembly.Module): { memory: WebAssembly.Memory } | undefined {
  if (!instantiateSync) return undefined;
  try {
    return (full ? fullGlue.initSync : readGlue.initSync)({ module });
  } catch (e) {
    if (e instanceof RangeError) return undefined;
    throw e;
  }
}

async function instantiate(module: WebAssembly.Module): Promise<Engine> {
  const full = isFull(module);
  const glue = full ? fullGlue : (readGlue as unknown as typeof fullGlue);
  const exports = instantiateNow(full, module) ?? (await (full ? initFull : initRead)({ module_or_path: module }));
  const engine: Engine = { WasmTable: glue.WasmTable, WasmMdtCache: glue.WasmMdtCache, discoverTables: glue.discoverTables, discoverJs: glue.discoverJs, full, memory: exports.memory };
  loaded.push(engine);
  if (full) fullLoaded = engine;
  return engine;
}

function settle(p: Promise<Engine>, reset: () => void): Promise<Engine> {
  return p.catch((e) => {
    reset();
    throw toHudiError(e);
  });
}

/** The read module compiling, started by an entry point at import (`prepareWasm`). */
let early: Promise<WebAssembly.Module> | undefined;

/** @internal Starts compiling the read module now, so the first open finds it compiled (or nearly). A
 *  failure here is not reported: the first open loads again and reports it. */
export function prepareWasm(): void {
  const source = sources.read ?? sources.full;
  if (early || readReady || !source) return;
  early = (async () => compile(await source()))();
  early.catch(() => (early = undefined));
}

/** @internal Whether a module is instantiated (an open then waits for nothing but its requests). */
export function engineLoaded(): boolean {
  return loaded.length > 0;
}

/** @internal The module reads run in: the full one once it is loaded, else the read module. */
export function readEngine(): Promise<Engine> {
  if (fullLoaded) return Promise.resolve(fullLoaded);
  readReady ??= settle(
    (async () => {
      const source = sources.read ?? sources.full;
      if (!source) throw new Error('hudi-edge: no wasm module registered (import the package by its name, or call initWasm(input))');
      const module = (await early?.catch(() => undefined)) ?? (await compile(await source()));
      return instantiate(module);
    })(),
    () => (readReady = undefined),
  );
  return readReady;
}

/** @internal The full module (writes, services), loaded on first use. */
export function fullEngine(): Promise<Engine> {
  if (fullLoaded) return Promise.resolve(fullLoaded);
  fullReady ??= settle(
    (async () => {
      if (!sources.full) throw new Error('hudi-edge: the full wasm module (writes) is not registered: call initWasm(input, writeInput)');
      const module = await compile(await sources.full());
      if (!isFull(module)) throw new Error('hudi-edge: the module given for writes is the read module (hudi_edge_read_bg.wasm); writes need hudi_edge_bg.wasm');
      return instantiate(module);
    })(),
    () => (fullReady = undefined),
  );
  return fullReady;
}

/**
 * Loads and instantiates the engine's read module. Called by `HudiTable.open*`; call it yourself
 * to load it earlier or from somewhere else (a CDN URL, bytes, a precompiled
 * `WebAssembly.Module`). `writeInput` says where the full module (`hudi_edge_bg.wasm`, loaded
 * on the first write) comes from when not from beside the package. Given the full module as
 * `input`, it serves reads and writes alone.
 */
export async function initWasm(input?: WasmInput | Promise<WasmInput>, writeInput?: WasmInput | Promise<WasmInput>): Promise<void> {
  if (writeInput !== undefined && !fullLoaded) {
    const given = writeInput;
    sources = { ...sources, full: () => given };
    fullReady = undefined;
  }
  const given = await input;
  if (given === undefined) {
    await readEngine();
    return;
  }
  if (fullLoaded || readReady) {
    await readEngine();
    return;
  }
  const module = await compile(given).catch((e) => {
    throw toHudiError(e);
  });
  if (isFull(module)) {
    fullReady ??= settle(instantiate(module), () => (fullReady = undefined));
    await fullReady;
  } else {
    readReady = settle(instantiate(module), () => (readReady = undefined));
    await readReady;
  }
}

/** The size of the engine's linear memory in bytes, of every module loaded (0 before one
 *  is). It grows as needed and never shrinks; freed memory is reused. */
export function wasmMemoryBytes(): number {
  return loaded.reduce((n, e) => n + e.memory.buffer.byteLength, 0);
}
