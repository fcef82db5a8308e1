/**
 * The browser tests' harness: Debian's Chromium driven by puppeteer-core (no browser download; the
 * version of puppeteer-core is pinned in e2e/package.json). One headless browser per test file.
 *
 * Chromium is CHROMIUM_PATH, else /usr/bin/chromium. Without it a browser test file skips, saying so
 * on the console; with CI=true it fails instead (.ci/run installs Debian's chromium first).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import puppeteer, { type Browser, type HTTPResponse, type Page } from 'puppeteer-core';

const ROOT = join(__dirname, '..', '..');
const DEFAULT_CHROMIUM = '/usr/bin/chromium';

/** Where Chromium is, or undefined when it is not installed here. */
export function chromiumPath(): string | undefined {
  const path = process.env.CHROMIUM_PATH || DEFAULT_CHROMIUM;
  return existsSync(path) ? path : undefined;
}

/**
 * `describe` when Chromium is here; otherwise, outside CI, `describe.skip` after one clear line (and
 * under CI=true a failing test naming what is missing, so a CI machine without it cannot pass quietly).
 */
export function describeWithBrowser(name: string, body: () => void): void {
  if (chromiumPath()) {
    describe(name, body);
    return;
  }
  const missing = `Chromium not found at ${process.env.CHROMIUM_PATH || DEFAULT_CHROMIUM} (set CHROMIUM_PATH, or apt-get install chromium)`;
  if (process.env.CI) {
    describe(name, () => {
      it('needs Chromium', () => {
        throw new Error(`${missing}: browser tests cannot be skipped under CI=true`);
      });
    });
    return;
  }
  console.warn(`SKIPPED browser tests "${name}": ${missing}`);
  describe.skip(name, body);
}

/** A headless Chromium (root in a container needs --no-sandbox; /dev/shm may be small there). */
export async function launchBrowser(): Promise<Browser> {
  const executablePath = chromiumPath();
  if (!executablePath) throw new Error('Chromium not found (see describeWithBrowser)');
  return puppeteer.launch({
    executablePath,
    headless: true,
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu', '--no-first-run', '--no-default-browser-check'],
    defaultViewport: { width: 1280, height: 860 },
  });
}

/**
 * A new page that records what must never happen on a console page: a JavaScript dialog (an injected
 * `onerror=alert(1)` firing), or a console error such as a CSP violation report.
 */
export async function watchedPage(browser: Browser | Awaited<ReturnType<Browser['createBrowserContext']>>): Promise<{
  page: Page;
  dialogs: string[];
  consoleErrors: string[];
}> {
  const page = await browser.newPage();
  const dialogs: string[] = [];
  const consoleErrors: string[] = [];
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(m.text());
  });
  return { page, dialogs, consoleErrors };
}

/** Navigates and waits for the page's HTML: the main response (its status and headers). */
export async function open(page: Page, url: string): Promise<HTTPResponse> {
  const response = await page.goto(url, { waitUntil: 'domcontentloaded' });
  if (!response) throw new Error(`no response for ${url}`);
  return response;
}

/** Submits the form holding `selector` (a button) and waits for the page it leads to. */
export async function submit(page: Page, selector: string): Promise<HTTPResponse> {
  const [response] = await Promise.all([
    page.waitForNavigation({ waitUntil: 'domcontentloaded' }),
    page.click(selector),
  ]);
  if (!response) throw new Error(`no response after clicking ${selector}`);
  return response;
}

/** Follows a link and waits for the page it leads to. */
export async function follow(page: Page, selector: string): Promise<HTTPResponse> {
  return submit(page, selector);
}

/** The visible text of the first element matching `selector` ('' when none). */
export async function textOf(page: Page, selector: string): Promise<string> {
  return page.$eval(selector, (e) => (e as HTMLElement).innerText).catch(() => '');
}

/**
 * With CONSOLE_SCREENSHOTS=1, a screenshot of the page as docs/console/<name>.png (the pictures of
 * docs/console.md); otherwise nothing, so CI never rewrites the docs.
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  if (process.env.CONSOLE_SCREENSHOTS !== '1') return;
  const dir = join(ROOT, 'docs', 'console');
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: join(dir, `${name}.png`) as `${string}.png`, fullPage: true });
}
