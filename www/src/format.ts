// Numbers, sizes and Hudi instant times for people.

export function bytes(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return '–';
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[u]}`;
}

export const count = (n: number | null | undefined) => (n === null || n === undefined ? '–' : n.toLocaleString('en-US'));

export function ms(n: number): string {
  if (n < 1) return `${n.toFixed(2)} ms`;
  if (n < 1000) return `${Math.round(n)} ms`;
  if (n < 60_000) return `${(n / 1000).toFixed(n < 10_000 ? 2 : 1)} s`;
  return `${Math.floor(n / 60_000)} min ${Math.round((n % 60_000) / 1000)} s`;
}

/** `yyyyMMddHHmmss[SSS]` as epoch millis of that wall-clock time read as UTC (so labels
 *  printed in UTC show the instant's own digits, whatever the table's timezone). */
export function instantMillis(t: string | null | undefined): number | null {
  if (!t || !/^\d{14,17}$/.test(t)) return null;
  const n = (a: number, b: number) => Number(t.slice(a, b));
  return Date.UTC(n(0, 4), n(4, 6) - 1, n(6, 8), n(8, 10), n(10, 12), n(12, 14), t.length >= 17 ? n(14, 17) : 0);
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** `2026-03-07 16:24:34.124` */
export function instantLabel(t: string | null | undefined): string {
  const m = instantMillis(t);
  if (m === null) return t ?? '–';
  const d = new Date(m);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}.${pad(d.getUTCMilliseconds(), 3)}`;
}

export function clockLabel(m: number, step: number): string {
  const d = new Date(m);
  const date = `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
  if (step >= 86_400_000) return date;
  const hm = `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}`;
  if (step >= 60_000) return hm;
  if (step >= 1000) return `${hm}:${pad(d.getUTCSeconds())}`;
  return `${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}.${pad(d.getUTCMilliseconds(), 3)}`;
}

export const dayLabel = (m: number) => {
  const d = new Date(m);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
};

/** Readable tick steps for a time axis, in ms. */
const STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 15e3, 3e4, 6e4, 12e4, 3e5, 6e5, 9e5, 18e5, 36e5, 72e5, 108e5, 216e5, 432e5, 864e5, 1728e5, 6048e5, 2592e6, 31536e6];

export function timeTicks(t0: number, t1: number, maxTicks: number): { step: number; ticks: number[] } {
  const span = Math.max(1, t1 - t0);
  const step = STEPS.find((s) => span / s <= maxTicks) ?? STEPS.at(-1)!;
  const ticks: number[] = [];
  for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) ticks.push(t);
  return { step, ticks };
}

export const plural = (n: number, one: string, many = `${one}s`) => `${count(n)} ${n === 1 ? one : many}`;
