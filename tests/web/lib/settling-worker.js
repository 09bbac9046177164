// Copied beside a worker the tests serve in workerd: wraps its handler so that the work it hands
// to ctx.waitUntil (what it does after its answers) is counted; GET /__running answers that
// count at once. Tests poll it and read the table once it is 0, not while the worker still
// changes it. (Polled from outside: a request waiting inside workerd on other requests' work
// can be cancelled as hung.)
export function settling(handler) {
  let running = 0;
  return {
    ...handler,
    async fetch(request, env, ctx) {
      if (new URL(request.url).pathname === '/__running') return Response.json({ running });
      const tracked = {
        waitUntil: (promise) => {
          running += 1;
          ctx.waitUntil(Promise.resolve(promise).finally(() => (running -= 1)));
        },
        passThroughOnException: () => ctx.passThroughOnException?.(),
      };
      return handler.fetch(request, env, tracked);
    },
  };
}

/** Resolves once the worker at `url` (wrapped by settling()) runs no work after its answers;
 *  fails after `timeoutMs`. */
export async function settled(url, timeoutMs = 180_000) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const res = await fetch(`${url}/__running`);
    if (res.status !== 200) throw new Error(`${url}/__running answered ${res.status}`);
    const { running } = await res.json();
    if (running === 0) return;
    if (Date.now() > until) throw new Error(`the worker at ${url} still runs ${running} tasks after its answers ${timeoutMs} ms on`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
