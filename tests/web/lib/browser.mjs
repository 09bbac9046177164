// Debian's Chromium driven by playwright-core (see /work/shared/docs/wasm-toolchain.md): a
// persistent context in a fresh profile, with the flags that keep it quiet on a closed network.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

export const CHROMIUM = process.env.HUDI_EDGE_CHROMIUM ?? '/usr/bin/chromium';

export async function launchChromium({ viewport = { width: 1440, height: 960 } } = {}) {
  const profile = mkdtempSync(join(tmpdir(), 'hudi-edge-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
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
