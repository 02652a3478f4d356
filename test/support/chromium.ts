import { existsSync } from 'node:fs';
import { chromium, type BrowserContext, type Locator, type Page } from 'playwright-core';

/** Debian's chromium: the dashboard's tests and screenshots never download a browser. */
export const CHROMIUM = '/usr/bin/chromium';

/**
 * A headless Chromium with a profile of its own in `userDataDir`, its first page, and the CSP
 * violations and script errors that page reports (`problems`: a clean run leaves it empty).
 */
export async function launchChromium(
  userDataDir: string,
): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `${CHROMIUM} is missing: run scripts/ensure-tool.sh chromium chromium (make test does)`,
    );
  }
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport: { width: 1200, height: 800 },
  });
  context.setDefaultTimeout(10_000);
  const page = context.pages()[0] ?? (await context.newPage());
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (/content security policy/i.test(message.text())) problems.push(message.text());
  });
  return { context, page, problems };
}

/** Waits until one of `locator`'s elements shows `text`; else fails naming what they show. */
export async function sees(locator: Locator, text: string | RegExp): Promise<void> {
  try {
    await locator.filter({ hasText: text }).first().waitFor();
  } catch {
    const seen = await locator.allInnerTexts();
    throw new Error(`expected ${String(text)} in ${JSON.stringify(seen)}`);
  }
}
