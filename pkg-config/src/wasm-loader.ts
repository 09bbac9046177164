// Loading the wasm module once, lazily (on the first open), the way the runtime needs: each
// entry point (browser.ts, node.ts, workerd.ts) registers where its module comes from.

import init from './wasm/hudi_edge.js';
import { toHudiError } from './errors.js';

/** Anything wasm-bindgen's init accepts: a compiled module, bytes, a URL or a Response. */
export type WasmInput = WebAssembly.Module | BufferSource | URL | string | Response;

let provider: (() => WasmInput | Promise<WasmInput>) | undefined;
let ready: Promise<void> | undefined;
let memory: WebAssembly.Memory | undefined;

/** Used by the entry points: where the module comes from when `initWasm` is given nothing. */
export function setWasmProvider(p: () => WasmInput | Promise<WasmInput>) {
  provider = p;
}

/**
 * Loads and instantiates the engine. Called by `HudiTable.open*`; call it yourself to load the
 * module earlier or from somewhere else (a CDN URL, bytes, a precompiled `WebAssembly.Module`).
 */
export function initWasm(input?: WasmInput | Promise<WasmInput>): Promise<void> {
  ready ??= (async () => {
    const source = (await input) ?? (await provider?.());
    const exports = await init(source === undefined ? undefined : { module_or_path: source });
    memory = exports.memory;
  })().catch((e) => {
    ready = undefined;
    throw toHudiError(e);
  });
  return ready;
}

/** The size of the engine's linear memory in bytes (0 before it is loaded). It grows as needed
 *  and never shrinks; freed memory is reused. */
export function wasmMemoryBytes(): number {
  return memory?.buffer.byteLength ?? 0;
}
