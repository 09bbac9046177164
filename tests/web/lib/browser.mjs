// Debian's Chromium driven by playwright-core (see /work/shared/docs/wasm-toolchain.md): a
// persistent context in a fresh profile, with the flags that keep it quiet on a closed network.
import { mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, afterEach, before } from 'node:test';
import { chromium } from 'playwright-core';
import { CHROMIUM, requireBinary, tempDir } from '../../lib/harness.mjs';

export { CHROMIUM };

/** Where the e2e tests write screenshots: `HUDI_EDGE_SCREENSHOTS` (e.g. www/screenshots, to
 *  refresh the README's images) or a temp dir removed at exit, so a test run leaves tracked
 *  files alone. */
export function screenshotDir() {
  const asked = process.env.HUDI_EDGE_SCREENSHOTS;
  if (!asked) return tempDir('screenshots');
  mkdirSync(asked, { recursive: true });
  return resolve(asked);
}

export async function launchChromium({ viewport = { width: 1440, height: 960 } } = {}) {
  const profile = tempDir('chromium');
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: requireBinary(CHROMIUM, 'Chromium', 'HUDI_EDGE_CHROMIUM'),
    headless: true,
    viewport,
    deviceScaleFactor: 1,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  // Uncaught exceptions and unhandled rejections in any page fail the test that saw them
  // (assertNoPageErrors) and, at the latest, close().
  const pageErrors = [];
  const assertNoPageErrors = () => {
    const errors = pageErrors.splice(0);
    if (errors.length) throw new Error(`uncaught error(s) in the page:\n${errors.join('\n')}`);
  };
  return {
    context,
    async newPage() {
      const page = await context.newPage();
      page.on('pageerror', (e) => {
        console.error(`[page error] ${e.message}`);
        pageErrors.push(`${e.name}: ${e.message}`);
      });
      page.on('console', (m) => m.type() === 'error' && console.error(`[console] ${m.text()}`));
      return page;
    },
    assertNoPageErrors,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
      assertNoPageErrors();
    },
  };
}

/** For a viewer test file: before its tests, nginx serving the built viewer (www/dist) at `/`
 *  beside `mounts` ({ '/cdc/': dir, … }), Chromium and one page; after each test, no uncaught
 *  page error; at the end, both stopped. Returns { nginx, browser, page }, filled in `before`. */
export function useViewer(mounts) {
  const state = {};
  before(async () => {
    const { existsSync } = await import('node:fs');
    const { repo, startNginx } = await import('./servers.mjs');
    const dist = join(repo, 'www', 'dist');
    if (!existsSync(join(dist, 'index.html'))) throw new Error('www/dist is not built (cd www && npm ci && npm run build)');
    state.nginx = await startNginx({ mounts: { ...mounts(), '/': dist } });
    state.browser = await launchChromium();
    state.page = await state.browser.newPage();
  });
  afterEach(() => state.browser?.assertNoPageErrors());
  after(async () => {
    await state.nginx?.stop();
    await state.browser?.close();
  });
  return state;
}
