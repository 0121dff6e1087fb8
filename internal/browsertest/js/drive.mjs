// Loads the test page in headless Chromium and prints, as one JSON line on
// stdout, what the page's MCP client did (window.outcome), with the page's
// console and its failed requests. Usage:
//
//   node drive.mjs <chromium> <user-data-dir> <page URL> <timeout ms>
//
// The flags are the ones this machine needs: without the background
// networking ones, Chromium keeps trying hosts that a closed network refuses.
// The timeout bounds the whole run and each wait in it; the browser is
// closed (killed if closing hangs) before the script exits.
import puppeteer from "puppeteer-core";

const [executablePath, userDataDir, pageURL, timeoutArg] = process.argv.slice(2);
const timeout = Number(timeoutArg);
if (!executablePath || !userDataDir || !pageURL || !(timeout > 0)) {
  console.error("usage: node drive.mjs <chromium> <user-data-dir> <page URL> <timeout ms>");
  process.exit(2);
}

const report = { console: [], failedRequests: [], ms: {} };
const t0 = Date.now();
const mark = (step) => (report.ms[step] = Date.now() - t0);

let browser;
// A last resort: whatever hangs, the script ends, takes Chromium with it
// and says how far it got.
const watchdog = setTimeout(() => {
  report.driverError = `no outcome within ${timeout} ms; the browser was killed`;
  browser?.process()?.kill("SIGKILL");
  process.stdout.write(JSON.stringify(report) + "\n", () => process.exit(3));
}, timeout);

try {
  browser = await puppeteer.launch({
    executablePath,
    userDataDir,
    headless: true,
    // The DevTools protocol over a pipe, not a port: Chromium ends when the
    // pipe closes, so even a killed driver takes the browser with it.
    pipe: true,
    timeout,
    protocolTimeout: timeout,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  mark("launched");
  report.pid = browser.process()?.pid ?? 0;
  report.browser = await browser.version();
  const page = await browser.newPage();
  page.setDefaultTimeout(timeout);
  page.on("console", (m) => report.console.push(`${m.type()}: ${m.text()}`));
  page.on("pageerror", (e) => report.console.push(`pageerror: ${e.message}`));
  page.on("requestfailed", (r) =>
    report.failedRequests.push({ method: r.method(), url: r.url(), error: r.failure()?.errorText ?? "" }),
  );
  await page.goto(pageURL, { waitUntil: "load", timeout });
  mark("loaded");
  await page.waitForFunction(() => window.outcome !== undefined, { timeout, polling: 50 });
  report.outcome = await page.evaluate(() => window.outcome);
  mark("outcome");
} catch (e) {
  report.driverError = String(e?.stack ?? e);
} finally {
  if (browser) {
    const closed = browser.close().then(() => true, () => false);
    let grace;
    const late = new Promise((r) => (grace = setTimeout(() => r(false), 5000)));
    const inTime = await Promise.race([closed, late]);
    clearTimeout(grace);
    if (!inTime) {
      browser.process()?.kill("SIGKILL");
    }
  }
  mark("closed");
  clearTimeout(watchdog);
}
process.stdout.write(JSON.stringify(report) + "\n");
