// A slow network link in user space, for benchmarks: a TCP proxy on 127.0.0.1 in front of
// `target` whose connections share one downstream bottleneck of `mbit` Mbit/s, taking turns in
// 16 KiB slices as concurrent TCP flows roughly do, and see `rttMs` of round trip (half each
// way; a new connection's first bytes also wait one round trip, its handshake). TCP's slow
// start is not modelled. Chromium's own network emulation delivered 16–19 Mbit/s when asked
// for 50 on the 2-core test machine (a 1.5 MB download: 650–790 ms against 280 ms), and
// loopback qdiscs (tc netem) are not available there, so the shaping happens here.
import { createConnection, createServer } from 'node:net';

const SLICE = 16 * 1024;

export async function startLinkProxy(target, { mbit, rttMs }) {
  const t = new URL(target);
  const bytesPerMs = (mbit * 1e6) / 8 / 1000;
  const oneWay = rttMs / 2;
  const sockets = new Set();
  // Connections with bytes waiting for the bottleneck, served round robin.
  const waiting = [];
  let sending = false;
  let linkFreeAt = 0;
  const pump = () => {
    if (sending) return;
    const flow = waiting.shift();
    if (!flow) return;
    sending = true;
    const slice = flow.take();
    if (flow.queued()) waiting.push(flow);
    linkFreeAt = Math.max(performance.now(), linkFreeAt) + slice.length / bytesPerMs;
    flow.arrive(slice, linkFreeAt + oneWay);
    setTimeout(() => {
      sending = false;
      pump();
    }, linkFreeAt - performance.now());
  };

  const server = createServer((client) => {
    const upstream = createConnection({ host: t.hostname, port: Number(t.port) });
    sockets.add(client).add(upstream);
    // Client → server: the handshake's round trip, then half a round trip per chunk, in order.
    let upAt = performance.now() + rttMs;
    client.on('data', (chunk) => {
      upAt = Math.max(performance.now() + oneWay, upAt);
      setTimeout(() => upstream.writable && upstream.write(chunk), upAt - performance.now());
    });
    // Server → client: queued for the bottleneck, delivered in order once across it.
    const queue = [];
    const crossing = [];
    let lastArrival = 0;
    const deliver = () => {
      while (crossing.length && crossing[0].at <= performance.now()) {
        const { slice } = crossing.shift();
        if (client.writable) client.write(slice);
      }
      if (crossing.length) setTimeout(deliver, crossing[0].at - performance.now());
    };
    const flow = {
      queued: () => queue.length > 0,
      take() {
        const head = queue[0];
        if (head.length <= SLICE) return queue.shift();
        queue[0] = head.subarray(SLICE);
        return head.subarray(0, SLICE);
      },
      arrive(slice, at) {
        lastArrival = Math.max(at, lastArrival);
        crossing.push({ slice, at: lastArrival });
        if (crossing.length === 1) setTimeout(deliver, lastArrival - performance.now());
      },
    };
    upstream.on('data', (chunk) => {
      const idle = queue.length === 0;
      queue.push(chunk);
      if (idle) waiting.push(flow);
      pump();
    });
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      // Once what is queued or crossing has arrived.
      const drained = () => {
        if (queue.length > 0 || performance.now() < lastArrival) return setTimeout(drained, 5);
        client.destroy();
        upstream.destroy();
        sockets.delete(client);
        sockets.delete(upstream);
      };
      drained();
    };
    client.on('close', close).on('error', close);
    upstream.on('close', close).on('error', close);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    stop: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(resolve);
      }),
  };
}
