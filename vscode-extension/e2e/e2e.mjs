// Playwright driver of the VS Code end-to-end test (started by run.sh, which
// sets up code-server, the workspaces and the environment below).
//
// It drives the code-server workbench in Debian's Chromium like a user:
// keyboard shortcuts, Quick Open, the command palette, the mouse for hovers,
// and reads what is on screen (status bar, Problems panel, hover widget, the
// preview webview). Each check is a named step with a screenshot; waits poll
// for the final state with generous timeouts instead of sleeping.
//
// Environment: PLAYWRIGHT_CORE (package dir), CHROMIUM, DFD_E2E_URL (code-server),
// DFD_E2E_ARTIFACTS (screenshots), DFD_E2E_SESSION (name prefix),
// DFD_E2E_SCENARIOS and DFD_E2E_FOLDERS (comma-separated, pairwise),
// DFD_E2E_PROFILE (fresh Chromium profile dir), DFD_E2E_RESULT (JSON written
// with {passed, failed, results}), DFD_E2E_DFD (the dfd the package bundles:
// `dfd format` says what format on save must write).
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";

const env = process.env;
const require = createRequire(import.meta.url);
const { chromium } = require(env.PLAYWRIGHT_CORE);

const base = env.DFD_E2E_URL;
const artifacts = env.DFD_E2E_ARTIFACTS;
const session = env.DFD_E2E_SESSION || "e2e";
const scenarios = (env.DFD_E2E_SCENARIOS || "").split(",").filter(Boolean);
const folders = (env.DFD_E2E_FOLDERS || "").split(",").filter(Boolean);

let passed = 0;
let failed = 0;
let shots = 0;
const results = [];
const t0 = Date.now();

function writeResult() {
  fs.writeFileSync(env.DFD_E2E_RESULT, JSON.stringify({ passed, failed, results }, null, 2));
}
function note(msg) {
  process.stderr.write(`  [${((Date.now() - t0) / 1000).toFixed(1)}s] ${msg}\n`);
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const slug = (s) => s.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "").slice(0, 60);
const norm = (s) => (s ?? "").replace(/\u00a0/g, " ").replace(/[ \t]+/g, " ");
const short = (s, n = 300) => {
  const t = norm(String(s ?? "")).replace(/\s*\n\s*/g, " ⏎ ").trim();
  return t.length > n ? t.slice(0, n) + "…" : t;
};

async function screenshot(page, name) {
  shots++;
  const file = path.join(artifacts, `${session}-${String(shots).padStart(2, "0")}-${name}.png`);
  try {
    await page.screenshot({ path: file, timeout: 20000 });
  } catch (e) {
    note(`screenshot ${name} failed: ${e.message.split("\n")[0]}`);
  }
  return file;
}

/** Runs one named check; an exception fails it. Always takes a screenshot. */
async function step(page, name, fn) {
  const start = Date.now();
  note(`step: ${name}`);
  let ok = false;
  let detail = "";
  try {
    detail = (await fn()) ?? "";
    ok = true;
  } catch (e) {
    detail = e && e.message ? e.message : String(e);
  }
  const secs = ((Date.now() - start) / 1000).toFixed(1);
  const file = await screenshot(page, slug(name) + (ok ? "" : "-FAILED"));
  if (ok) {
    passed++;
    console.log(`PASS ${session}: ${name}${detail ? ` — ${short(detail, 200)}` : ""} (${secs}s)`);
  } else {
    failed++;
    console.log(`FAIL ${session}: ${name}: ${short(detail, 1200)} (${secs}s; screenshot ${path.basename(file)})`);
  }
  results.push({ name, ok, detail: short(detail, 4000), seconds: Number(secs), screenshot: path.basename(file) });
  writeResult();
  return ok;
}

/**
 * Polls `probe` until `accept(value)` holds; returns the value. On timeout
 * throws, describing the last value seen.
 */
async function waitFor(what, probe, accept = (v) => !!v, { timeout = 60000, interval = 400 } = {}) {
  const end = Date.now() + timeout;
  let last;
  let lastErr;
  for (;;) {
    try {
      last = await probe();
      lastErr = undefined;
      if (accept(last)) return last;
    } catch (e) {
      lastErr = e;
    }
    if (Date.now() > end) {
      const seen = lastErr ? `error ${lastErr.message.split("\n")[0]}` : `last seen: ${short(typeof last === "string" ? last : JSON.stringify(last), 800)}`;
      throw new Error(`timed out after ${timeout / 1000}s waiting for ${what}; ${seen}`);
    }
    await sleep(interval);
  }
}

// ---- workbench helpers ---------------------------------------------------------------

async function openFolder(page, folder) {
  await page.goto(`${base}/?folder=${encodeURIComponent(folder)}`, { waitUntil: "domcontentloaded", timeout: 90000 });
  await page.locator(".monaco-workbench .part.statusbar").waitFor({ state: "visible", timeout: 90000 });
  await page.locator(".monaco-workbench .part.editor").waitFor({ state: "visible", timeout: 30000 });
  // The workbench restores and activates extensions in the first seconds.
  await sleep(1500);
}

/** Text of the dfd status bar item (null when absent). */
async function statusText(page) {
  return page.evaluate(() => {
    const items = [...document.querySelectorAll(".part.statusbar .statusbar-item")];
    const byId = items.find((el) => /dfd\.status$/.test(el.id || ""));
    const el = byId || items.find((e) => /\bdfd:/.test(e.innerText || e.textContent || ""));
    return el ? (el.innerText || el.textContent || "").replace(/\s+/g, " ").trim() : null;
  });
}

async function activeTabTitle(page) {
  return page.evaluate(() => {
    const tab =
      document.querySelector(".part.editor .editor-group-container.active .tab.active") ||
      document.querySelector(".part.editor .tab.active");
    if (!tab) return null;
    const label = tab.querySelector(".label-name");
    return ((label && label.textContent) || tab.getAttribute("aria-label") || "").trim();
  });
}

/** The cursor position shown in the status bar ("Ln 7, Col 14"). */
async function cursorPosition(page) {
  return page.evaluate(() => {
    const el = document.querySelector('.part.statusbar [id="status.editor.selection"]');
    return el ? (el.innerText || "").trim() : "?";
  });
}

/** Hides any hover widget: mouse away from the text, Escape, wait until gone. */
async function dismissHover(page) {
  for (let i = 0; i < 5; i++) {
    if (!(await hoverText(page))) return;
    await page.mouse.move(5, 5);
    await page.keyboard.press("Escape");
    await sleep(400);
  }
}

/** Moves the cursor with Go to Line/Column (Ctrl+G), retried. */
async function goToLine(page, line, col) {
  const want = `Ln ${line}, Col ${col}`;
  for (let i = 0; i < 5; i++) {
    await closeQuickInput(page);
    await page.keyboard.press("Control+G");
    const input = page.locator(".quick-input-widget .quick-input-box input");
    try {
      await input.waitFor({ state: "visible", timeout: 5000 });
      await input.fill(`:${line}:${col}`);
      await sleep(300);
      await page.keyboard.press("Enter");
      await waitFor(want, () => cursorPosition(page), (p) => p.startsWith(want), { timeout: 5000 });
      return;
    } catch (e) {
      note(`go to line: retrying (${e.message.split("\n")[0]})`);
    }
  }
  throw new Error(`could not move the cursor to ${want}`);
}

/** Visible text of the active editor (lines on screen). */
async function editorText(page) {
  return page.evaluate(() => {
    const el =
      document.querySelector(".part.editor .editor-group-container.active .monaco-editor .view-lines") ||
      document.querySelector(".part.editor .monaco-editor .view-lines");
    if (!el) return null;
    const lines = [...el.querySelectorAll(".view-line")]
      .map((l) => ({ top: parseFloat(l.style.top) || 0, text: (l.textContent || "").replace(/\u00a0/g, " ") }))
      .sort((a, b) => a.top - b.top);
    return lines.map((l) => l.text).join("\n");
  });
}

async function quickInputVisible(page) {
  return page.locator(".quick-input-widget").isVisible().catch(() => false);
}

async function closeQuickInput(page) {
  for (let i = 0; i < 3 && (await quickInputVisible(page)); i++) {
    await page.keyboard.press("Escape");
    await sleep(200);
  }
}

/** Quick Open (Ctrl+P) a file by name, retried; waits until its tab is active. */
async function quickOpen(page, fileName, { timeout = 60000 } = {}) {
  const end = Date.now() + timeout;
  let lastErr = "";
  while (Date.now() < end) {
    await closeQuickInput(page);
    await page.keyboard.press("Control+P");
    const input = page.locator(".quick-input-widget .quick-input-box input");
    try {
      await input.waitFor({ state: "visible", timeout: 5000 });
      await input.fill(fileName);
      const row = page.locator(".quick-input-widget .quick-input-list .monaco-list-row", { hasText: fileName }).first();
      await row.waitFor({ state: "visible", timeout: 15000 });
      await row.click();
      await waitFor(`tab ${fileName}`, () => activeTabTitle(page), (t) => t === fileName, { timeout: 15000 });
      await sleep(300);
      await resetCtrl(page);
      return;
    } catch (e) {
      lastErr = e.message.split("\n")[0];
      note(`quick open ${fileName}: retrying (${lastErr})`);
      await sleep(1000);
    }
  }
  throw new Error(`could not open ${fileName} with Quick Open: ${lastErr}`);
}

/** Runs a command by its title through the command palette (F1), retried. */
async function runCommand(page, title, { timeout = 60000 } = {}) {
  const end = Date.now() + timeout;
  let lastErr = "";
  while (Date.now() < end) {
    await closeQuickInput(page);
    await page.keyboard.press("F1");
    const input = page.locator(".quick-input-widget .quick-input-box input");
    try {
      await input.waitFor({ state: "visible", timeout: 5000 });
      await input.fill(">" + title);
      const row = page
        .locator(".quick-input-widget .quick-input-list .monaco-list-row")
        .filter({ has: page.locator(".label-name", { hasText: title }) })
        .first();
      await row.waitFor({ state: "visible", timeout: 6000 });
      await row.click();
      await sleep(300);
      return;
    } catch (e) {
      lastErr = e.message.split("\n")[0];
      note(`command ${title}: retrying (${lastErr})`);
      await sleep(1500);
    }
  }
  throw new Error(`could not run "${title}" from the command palette: ${lastErr}`);
}

/** Puts the keyboard focus in the active editor (Ctrl+1: first editor group). */
async function focusEditor(page) {
  await closeQuickInput(page);
  await page.keyboard.press("Control+1");
  await sleep(200);
  await resetCtrl(page);
}

/**
 * After a Ctrl+<key> shortcut whose key-up went elsewhere (Ctrl+P, Ctrl+1),
 * the editor still believes Ctrl is held: words under the mouse become
 * go-to-definition links, clicks do not move the cursor and hovers do not
 * show. Pressing and releasing Ctrl alone in the editor resets that.
 */
async function resetCtrl(page) {
  await page.keyboard.press("Control");
  await page.keyboard.press("Escape");
  await sleep(100);
}

/** Text of the Problems panel, opening it (Ctrl+Shift+M) when not visible. */
async function problemsText(page) {
  const panel = page.locator(".markers-panel");
  if (!(await panel.isVisible().catch(() => false))) {
    await closeQuickInput(page);
    await page.keyboard.press("Control+Shift+M");
    await panel.waitFor({ state: "visible", timeout: 10000 });
    await sleep(300);
  }
  return page.evaluate(() => {
    const p = document.querySelector(".markers-panel");
    const container = p && (p.closest(".pane-body") || p.parentElement || p);
    return container ? (container.innerText || "").replace(/\u00a0/g, " ") : "";
  });
}

/** Centre of the first occurrence of `text` in the active editor's lines. */
async function textPoint(page, text) {
  return page.evaluate((text) => {
    const root =
      document.querySelector(".part.editor .editor-group-container.active .monaco-editor .view-lines") ||
      document.querySelector(".part.editor .monaco-editor .view-lines");
    if (!root) return null;
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const i = n.data.indexOf(text);
      if (i >= 0) {
        const r = document.createRange();
        r.setStart(n, i);
        r.setEnd(n, i + text.length);
        const b = r.getBoundingClientRect();
        if (b.width > 0) return { x: b.x + b.width / 2, y: b.y + b.height / 2 };
      }
    }
    return null;
  }, text);
}

/** Text of the visible hover widgets. */
async function hoverText(page) {
  return page.evaluate(() =>
    [...document.querySelectorAll(".monaco-hover")]
      .filter((h) => h.offsetParent !== null && h.getBoundingClientRect().height > 0)
      .map((h) => (h.innerText || "").replace(/\u00a0/g, " "))
      .join("\n---\n"),
  );
}

/** Text of notification toasts and of the notification center. */
async function notificationsText(page) {
  return page.evaluate(() =>
    [...document.querySelectorAll(".notifications-toasts .notification-toast, .notifications-center .notification-list-item")]
      .map((n) => (n.innerText || "").replace(/\u00a0/g, " "))
      .join("\n---\n"),
  );
}

/** Waits for a notification matching `re`, opening the notification center if toasts were hidden. */
async function waitNotification(page, what, re, timeout = 60000) {
  const start = Date.now();
  const end = start + timeout;
  let last = "";
  let opened = false;
  while (Date.now() < end) {
    last = await notificationsText(page);
    if (re.test(last)) return last;
    if (!opened && Date.now() > start + 8000) {
      // Toasts hide after a while: the notification center keeps them.
      await runCommand(page, "Notifications: Show Notifications", { timeout: 20000 }).catch(() => {});
      opened = true;
    }
    await sleep(500);
  }
  throw new Error(`timed out waiting for a notification ${what}; notifications: ${short(last, 800)}`);
}

/**
 * The preview webview's content: finds, among all frames (the webview is an
 * iframe inside an iframe), the one whose document has section.action or
 * div.error, and returns its actions with their SQL blocks.
 */
async function previewContent(page) {
  for (const frame of page.frames()) {
    let r = null;
    try {
      r = await Promise.race([
        frame.evaluate(() => {
          // The workbench itself has div.error elements: only the webview's document counts.
          if (document.querySelector(".monaco-workbench")) return null;
          const sections = [...document.querySelectorAll("section.action")];
          if (!sections.length && !document.querySelector("div.error")) return null;
          return {
            actions: sections.map((s) => ({
              target: s.getAttribute("data-target"),
              jit: s.getAttribute("data-jit"),
              sql: [...s.querySelectorAll("pre.sql")].map((p) => ({
                kind: p.getAttribute("data-kind"),
                inJit: !!p.closest("div.jit"),
                text: p.textContent || "",
              })),
              jitText: [...s.querySelectorAll("div.jit")].map((d) => d.innerText || "").join("\n"),
            })),
            errors: [...document.querySelectorAll("div.error")].map((e) => e.innerText || ""),
            text: (document.body.innerText || "").slice(0, 3000),
          };
        }),
        sleep(5000).then(() => null),
      ]);
    } catch {
      r = null;
    }
    if (r) return r;
  }
  return null;
}


/**
 * The Dataform Data webview's content (like previewContent): the frame
 * whose document has the rows panel's header, its columns and cells.
 */
async function rowsContent(page) {
  for (const frame of page.frames()) {
    let r = null;
    try {
      r = await Promise.race([
        frame.evaluate(() => {
          if (document.querySelector(".monaco-workbench") || !document.querySelector("header.rows-head")) return null;
          return {
            head: document.querySelector("header.rows-head")?.innerText || "",
            columns: [...document.querySelectorAll("table.rows thead th[data-type]")].map((th) => `${th.querySelector(".name")?.textContent} ${th.getAttribute("data-type")}`),
            rows: [...document.querySelectorAll("table.rows tbody tr")].map((tr) => [...tr.querySelectorAll("td:not(.rownum)")].map((td) => td.textContent || "")),
            errors: [...document.querySelectorAll("div.error, div.refused, div.unavailable")].map((e) => e.innerText || ""),
          };
        }),
        sleep(5000).then(() => null),
      ]);
    } catch {
      r = null;
    }
    if (r) return r;
  }
  return null;
}

/**
 * The dependency graph webview's content (like previewContent): the frame
 * whose document has the graph's header, its nodes and edges.
 */
async function graphContent(page) {
  for (const frame of page.frames()) {
    let r = null;
    try {
      r = await Promise.race([
        frame.evaluate(() => {
          if (document.querySelector(".monaco-workbench") || !document.querySelector("header.graph-head")) return null;
          return {
            uri: document.getElementById("root")?.getAttribute("data-uri") || "",
            nodes: [...document.querySelectorAll("svg.graph g.node")].map((g) => ({
              name: g.getAttribute("data-name"),
              column: Number(g.getAttribute("data-column")),
              role: (g.getAttribute("class") || "").match(/role-(\w+)/)?.[1] || "",
              badges: [...g.querySelectorAll("g.badge")].map((b) => (b.getAttribute("class") || "").replace("badge ", "")),
            })),
            edges: [...document.querySelectorAll("svg.graph path.edge")].map((e) => `${e.getAttribute("data-from")} -> ${e.getAttribute("data-to")}`),
            errors: [...document.querySelectorAll("div.error")].map((e) => e.innerText || ""),
            text: (document.body.innerText || "").slice(0, 2000),
          };
        }),
        sleep(5000).then(() => null),
      ]);
    } catch {
      r = null;
    }
    if (r) return { frame, ...r };
  }
  return null;
}

/** Whether the active editor tab has unsaved changes. */
async function activeTabDirty(page) {
  return page.evaluate(() => !!document.querySelector(".part.editor .editor-group-container.active .tab.active.dirty"));
}

/** Waits until the Problems panel says the workspace has no problems, twice a second apart (not a passing moment). */
async function waitNoProblems(page, timeout = 60000) {
  let streak = 0;
  return waitFor(
    'Problems: "No problems have been detected in the workspace" (twice, 1 s apart)',
    async () => {
      const t = await problemsText(page);
      streak = /No problems have been detected in the workspace/.test(t) ? streak + 1 : 0;
      return { t, streak };
    },
    (v) => v.streak >= 2,
    { timeout, interval: 1000 },
  );
}

/** F2 at the cursor, types `name` into the rename box and accepts it with Enter. */
async function renameAtCursor(page, name) {
  await page.mouse.move(5, 5);
  await page.keyboard.press("F2");
  const input = page.locator(".monaco-editor .rename-box input.rename-input");
  await input.waitFor({ state: "visible", timeout: 15000 });
  const placeholder = await input.inputValue();
  await input.fill(name);
  await sleep(200);
  await page.keyboard.press("Enter");
  await input.waitFor({ state: "hidden", timeout: 15000 });
  return placeholder;
}

// ---- scenarios -----------------------------------------------------------------------

const BROKEN_SQLX = 'config { type: "view" }\nSELECT * FROM ${ref("no_such_table")}\n';

async function scenarioProject(page, folder) {
  const name = path.basename(folder);
  await step(page, "workbench opens the Dataform project", async () => {
    await openFolder(page, folder);
    return `folder ${name}`;
  });

  await step(page, "a. status bar shows the project and core 3.0.62", async () => {
    const t = await waitFor(
      `status bar item "dfd: ${name} · core 3.0.62"`,
      () => statusText(page),
      (t) => !!t && t.includes(`dfd: ${name}`) && t.includes("core 3.0.62") && /\d+ actions?/.test(t),
      { timeout: 120000 },
    );
    return t;
  });

  await step(page, "open top_countries.sqlx with Quick Open", async () => {
    await quickOpen(page, "top_countries.sqlx");
    const text = await waitFor("editor text", () => editorText(page), (t) => !!t && t.includes('ref("daily_clicks")'));
    return short(text, 120);
  });

  await step(page, "f. hover on ref(\"daily_clicks\") shows its snapshot columns", async () => {
    let last = "";
    const end = Date.now() + 90000;
    while (Date.now() < end) {
      const pt = await waitFor("ref text on screen", () => textPoint(page, "daily_clicks"));
      await page.mouse.move(pt.x - 200, pt.y + 150);
      await sleep(300);
      await page.mouse.move(pt.x, pt.y, { steps: 4 });
      try {
        last = await waitFor(
          "hover with the columns of daily_clicks",
          () => hoverText(page),
          (t) => /campaign_name/.test(t) && /click_date/.test(t) && /daily_clicks/.test(t),
          { timeout: 10000, interval: 300 },
        );
        return short(last, 200);
      } catch {
        last = await hoverText(page);
        note(`hover not there yet: ${short(last, 200)}`);
      }
      await page.keyboard.press("Escape");
      await sleep(1500);
    }
    throw new Error(`no hover with columns campaign_name and click_date; last hover text: ${short(last, 800)}`);
  });
  await page.mouse.move(5, 5);
  await page.keyboard.press("Escape");

  await step(page, "g. go to definition (F12) on the ref opens daily_clicks.js", async () => {
    // Where the ref's name is, from the file on disk (1-based, as the status bar shows).
    const src = fs.readFileSync(path.join(folder, "definitions", "top_countries.sqlx"), "utf8").split("\n");
    const line = src.findIndex((l) => l.includes('ref("daily_clicks")')) + 1;
    const col = src[line - 1].indexOf("daily_clicks") + 4;
    let last = "";
    const end = Date.now() + 90000;
    for (let attempt = 1; Date.now() < end; attempt++) {
      await focusEditor(page);
      await dismissHover(page);
      let how = "mouse click";
      if (attempt % 2 === 1) {
        // As a user would: click on the name.
        const pt = await waitFor("ref text on screen", () => textPoint(page, "daily_clicks"));
        const hit = await page.evaluate(({ x, y }) => {
          const el = document.elementFromPoint(x, y);
          const chain = [];
          for (let e = el; e && chain.length < 6; e = e.parentElement) chain.push(e.tagName.toLowerCase() + (e.className && typeof e.className === "string" ? "." + e.className.trim().split(/\s+/).join(".") : ""));
          return chain.join(" < ");
        }, pt);
        note(`clicking at ${JSON.stringify(pt)} on ${hit}`);
        await page.mouse.click(pt.x, pt.y);
        await sleep(300);
      }
      let pos = await cursorPosition(page);
      if (!pos.startsWith(`Ln ${line},`)) {
        // The click did not land (e.g. on a hover's edge): Go to Line/Column (Ctrl+G).
        how = "Ctrl+G";
        await goToLine(page, line, col);
        pos = await cursorPosition(page);
      }
      await page.mouse.move(5, 5);
      await page.keyboard.press("F12");
      try {
        last = await waitFor("active tab daily_clicks.js", () => activeTabTitle(page), (t) => t === "daily_clicks.js", { timeout: 15000 });
        const text = await waitFor("the definition on screen", () => editorText(page), (t) => !!t && t.includes('publish("daily_clicks"'));
        return `cursor ${pos} (${how}); active tab ${last}; shows ${short(text.split("\n").find((l) => l.includes("publish(")), 80)}`;
      } catch (e) {
        last = (await activeTabTitle(page)) ?? "";
        note(`definition not yet: active tab ${last}; cursor at F12 ${pos} (${how}), now ${await cursorPosition(page)}`);
        await page.keyboard.press("Escape");
        await sleep(1500);
      }
    }
    throw new Error(`the active tab did not become daily_clicks.js (it is ${last})`);
  });

  await step(page, "b. a broken .sqlx shows a diagnostic in the Problems panel", async () => {
    await quickOpen(page, "top_countries.sqlx");
    await focusEditor(page);
    await page.keyboard.press("Control+A");
    await page.keyboard.insertText(BROKEN_SQLX);
    await waitFor("the broken text in the editor", () => editorText(page), (t) => !!t && t.includes("no_such_table"), { timeout: 10000 });
    await page.keyboard.press("Control+S");
    await waitFor("the save (no dirty tab)", () =>
      page.evaluate(() => !document.querySelector(".part.editor .editor-group-container.active .tab.active.dirty")), (v) => v, { timeout: 15000 });
    const t = await waitFor(
      'a problem naming "no_such_table" in the Problems panel',
      () => problemsText(page),
      (t) => /no_such_table/.test(t) && /top_countries\.sqlx/.test(t),
      { timeout: 60000 },
    );
    return short(t.split("\n").filter((l) => /no_such_table/.test(l))[0] || t, 200);
  });

  await step(page, "c. fixing the file (undo + save) clears the problem", async () => {
    await focusEditor(page);
    // Typing is undone in several steps (Monaco makes undo stops at line
    // breaks): undo until the original text is back, as a user would.
    const restored = (t) => !!t && t.includes('ref("daily_clicks")') && !t.includes("no_such_table");
    let undos = 0;
    while (undos < 20 && !restored(await editorText(page))) {
      await page.keyboard.press("Control+Z");
      undos++;
      await sleep(250);
    }
    await waitFor("the original text back in the editor after undo", () => editorText(page), restored, { timeout: 10000 });
    await page.keyboard.press("Control+S");
    const t = await waitFor(
      'Problems: "No problems have been detected in the workspace"',
      () => problemsText(page),
      (t) => /No problems have been detected in the workspace/.test(t),
      { timeout: 60000 },
    );
    return `${undos} undo(s); ${short(t, 120)}`;
  });

  await step(page, "d. compiled preview of top_countries.sqlx shows its AoT SQL", async () => {
    await quickOpen(page, "top_countries.sqlx");
    await runCommand(page, "Dataform: Show Compiled Preview");
    const want = "FROM `acme-clickstream.clicks.daily_clicks`";
    const r = await waitFor(
      "preview webview with section.action[data-target=acme-clickstream.clicks.top_countries] and its query",
      () => previewContent(page),
      (r) =>
        !!r &&
        r.actions.some(
          (a) =>
            a.target === "acme-clickstream.clicks.top_countries" &&
            a.sql.some((s) => s.kind === "query" && !s.inJit && norm(s.text).includes(want) && /SUM\(clicks\)/.test(s.text)),
        ),
      { timeout: 60000, interval: 1000 },
    );
    const q = r.actions.find((a) => a.target === "acme-clickstream.clicks.top_countries").sql.find((s) => s.kind === "query");
    return short(q.text, 160);
  });

  await step(page, "e. JiT preview of daily_clicks.js shows SQL built from the offline snapshot", async () => {
    await quickOpen(page, "daily_clicks.js");
    const r = await waitFor(
      "preview of daily_clicks with a JiT query that selects campaign_name and joins campaigns",
      () => previewContent(page),
      (r) =>
        !!r &&
        r.actions.some(
          (a) =>
            a.target === "acme-clickstream.clicks.daily_clicks" &&
            a.sql.some(
              (s) =>
                s.inJit &&
                s.kind === "jitQuery" &&
                /c\.name AS campaign_name/.test(s.text) &&
                norm(s.text).includes("LEFT JOIN `acme-clickstream.clicks.campaigns`") &&
                norm(s.text).includes("`acme-collector.landing.raw_clicks`"),
            ),
        ),
      { timeout: 60000, interval: 1000 },
    );
    const a = r.actions.find((x) => x.target === "acme-clickstream.clicks.daily_clicks");
    if (!/offline snapshot/.test(a.jitText)) throw new Error(`the JiT block does not name the offline snapshot adapter: ${short(a.jitText, 400)}`);
    if (!/GetTable/.test(a.jitText)) throw new Error(`the JiT block lists no GetTable call: ${short(a.jitText, 400)}`);
    const q = a.sql.find((s) => s.kind === "jitQuery");
    return short(q.text, 200);
  });

  await scenarioGraphRenameFormat(page, folder);
}

const C = "acme-clickstream.clicks.";

/** The files of a project's definitions/ and their text. */
function definitionsOnDisk(folder) {
  const out = {};
  const walk = (dir) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else out[path.relative(folder, p)] = fs.readFileSync(p, "utf8");
    }
  };
  walk(path.join(folder, "definitions"));
  return out;
}

// The dependency graph, rename and format on save, in the same session
// (after the preview steps, which need the original top_countries.sqlx).
async function scenarioGraphRenameFormat(page, folder) {
  const focusIs = (g, name) => g.nodes.some((n) => n.name === name && n.role === "focus");
  const node = (g, name) => g.nodes.find((n) => n.name === name);

  await step(page, "i1. dependency graph of top_countries.sqlx shows daily_clicks upstream", async () => {
    await quickOpen(page, "top_countries.sqlx");
    await runCommand(page, "Dataform: Show Dependency Graph");
    const g = await waitFor(
      "graph webview centred on top_countries with daily_clicks one column to its left",
      () => graphContent(page),
      (g) => !!g && focusIs(g, C + "top_countries") && node(g, C + "daily_clicks")?.column === -1,
      { timeout: 60000, interval: 1000 },
    );
    const daily = node(g, C + "daily_clicks");
    if (!daily.badges.includes("jit")) throw new Error(`daily_clicks has no JiT badge: ${JSON.stringify(daily)}`);
    if (!g.edges.includes(`${C}daily_clicks -> ${C}top_countries`)) throw new Error(`no edge daily_clicks → top_countries: ${g.edges.join(", ")}`);
    return g.nodes.map((n) => `${n.name.replace(C, "")}@${n.column}`).join(", ");
  });

  await step(page, "i1b. the lineage button of top_countries in the graph opens its column lineage", async () => {
    const g = await waitFor("the graph", () => graphContent(page));
    await g.frame.locator(`g.node[data-name="${C}top_countries"] g.lineage`).click({ timeout: 10000 });
    // The quick pick of its columns, traced through the JiT table it reads (whose SQL the offline
    // snapshot lets dfd run) to the warehouse: country comes directly from daily_clicks.country,
    // and from raw_clicks.country at the origin.
    const what = await waitFor(
      "the lineage quick pick of top_countries with country's direct input and origin",
      () =>
        page.evaluate(() => {
          const w = document.querySelector(".quick-input-widget");
          const title = w && w.offsetParent !== null ? (w.querySelector(".quick-input-title")?.textContent || "") : "";
          const rows = [...document.querySelectorAll(".quick-input-list .monaco-list-row")].map((r) => r.innerText || "");
          return { title, rows };
        }),
      (v) =>
        v.title.includes("Lineage of acme-clickstream.clicks.top_countries") &&
        v.rows.some((r) => r.includes("acme-clickstream.clicks.daily_clicks.country") && r.includes("direct")) &&
        v.rows.some((r) => r.includes("raw_clicks.country") && r.includes("origin")),
      { timeout: 30000, interval: 500 },
    );
    await sleep(300);
    await screenshot(page, "i1b-lineage-open");
    await closeQuickInput(page);
    return `${what.title}: ${short(what.rows.map((r) => r.replace(/\s+/g, " ")).join(" | "), 300)}`;
  });

  await step(page, "i2. clicking daily_clicks in the graph opens daily_clicks.js; the graph follows", async () => {
    let last = "";
    const end = Date.now() + 60000;
    while (Date.now() < end) {
      const g = await waitFor("the graph", () => graphContent(page));
      await g.frame.locator(`g.node[data-name="${C}daily_clicks"] text.name`).click({ timeout: 10000 });
      try {
        last = await waitFor("active tab daily_clicks.js", () => activeTabTitle(page), (t) => t === "daily_clicks.js", { timeout: 10000 });
        break;
      } catch {
        last = (await activeTabTitle(page)) ?? "";
        note(`graph click: active tab is ${last}; retrying`);
      }
    }
    if (last !== "daily_clicks.js") throw new Error(`the active tab did not become daily_clicks.js (it is ${last})`);
    await waitFor("daily_clicks.js on screen", () => editorText(page), (t) => !!t && t.includes('publish("daily_clicks"'));
    // Following the active editor: daily_clicks in the middle, top_countries and the assertion downstream.
    const g = await waitFor(
      "the graph centred on daily_clicks, with top_countries to its right",
      () => graphContent(page),
      (g) => !!g && focusIs(g, C + "daily_clicks") && node(g, C + "top_countries")?.column === 1,
      { timeout: 30000, interval: 1000 },
    );
    const check = g.nodes.find((n) => n.name.endsWith(".daily_clicks_volume"));
    if (!check || !check.badges.includes("assertion")) throw new Error(`no assertion badge on daily_clicks_volume: ${JSON.stringify(check)}`);
    return `active tab ${last}; graph: ${g.nodes.map((n) => `${n.name.replace(C, "")}@${n.column}`).join(", ")}`;
  });

  const original = definitionsOnDisk(folder);
  await step(page, "j1. rename (F2) of daily_clicks in a ref edits every file; the graph follows unsaved", async () => {
    await quickOpen(page, "top_countries.sqlx");
    await focusEditor(page);
    const src = original[path.join("definitions", "top_countries.sqlx")].split("\n");
    const line = src.findIndex((l) => l.includes('ref("daily_clicks")')) + 1;
    await goToLine(page, line, src[line - 1].indexOf("daily_clicks") + 4);
    let placeholder = "";
    const end = Date.now() + 60000;
    for (;;) {
      try {
        placeholder = await renameAtCursor(page, "daily_clicks_v2");
        break;
      } catch (e) {
        if (Date.now() > end) throw e;
        note(`rename: retrying (${e.message.split("\n")[0]})`);
        await page.keyboard.press("Escape");
        await focusEditor(page);
        await goToLine(page, line, src[line - 1].indexOf("daily_clicks") + 4);
      }
    }
    if (placeholder !== "daily_clicks") throw new Error(`the rename box offered "${placeholder}", not daily_clicks`);
    await waitFor('ref("daily_clicks_v2") in top_countries.sqlx', () => editorText(page), (t) => !!t && t.includes('ref("daily_clicks_v2")'), { timeout: 20000 });
    // The graph of top_countries compiles the unsaved buffers: its upstream is the new name.
    const g = await waitFor(
      "the graph of top_countries with daily_clicks_v2 upstream",
      () => graphContent(page),
      (g) => !!g && focusIs(g, C + "top_countries") && node(g, C + "daily_clicks_v2")?.column === -1 && !node(g, C + "daily_clicks"),
      { timeout: 60000, interval: 1000 },
    );
    await quickOpen(page, "daily_clicks.js");
    await waitFor('publish("daily_clicks_v2" in daily_clicks.js', () => editorText(page), (t) => !!t && t.includes('publish("daily_clicks_v2"'), { timeout: 20000 });
    const p = await waitNoProblems(page);
    return `placeholder ${placeholder}; graph ${g.nodes.map((n) => n.name.replace(C, "")).join(", ")}; ${short(p.t, 80)}`;
  });

  await step(page, "j2. renaming it back (F2 on publish) and Save All restores every file", async () => {
    await quickOpen(page, "daily_clicks.js");
    await focusEditor(page);
    const text = await waitFor("daily_clicks.js with the new name", () => editorText(page), (t) => !!t && t.includes('publish("daily_clicks_v2"'));
    const lines = text.split("\n");
    const line = lines.findIndex((l) => l.includes('publish("daily_clicks_v2"')) + 1;
    await goToLine(page, line, lines[line - 1].indexOf("daily_clicks_v2") + 3);
    await renameAtCursor(page, "daily_clicks");
    await waitFor('publish("daily_clicks" back in daily_clicks.js', () => editorText(page), (t) => !!t && t.includes('publish("daily_clicks",'), { timeout: 20000 });
    await runCommand(page, "File: Save All");
    const diff = await waitFor(
      "every file of definitions/ as before the rename, on disk",
      () => {
        const now = definitionsOnDisk(folder);
        return Object.keys({ ...original, ...now }).filter((f) => now[f] !== original[f]);
      },
      (d) => d.length === 0,
      { timeout: 30000, interval: 500 },
    );
    await waitFor("no unsaved tab", () => page.evaluate(() => document.querySelectorAll(".part.editor .tab.dirty").length), (n) => n === 0, { timeout: 15000 });
    const p = await waitNoProblems(page);
    return `${Object.keys(original).length} files as before (${diff.length} differ); ${short(p.t, 80)}`;
  });

  await step(page, "k. format on save formats a messy top_countries.sqlx as dfd format does, and it compiles clean", async () => {
    // Format on save for SQLX only now: the earlier steps save text that must stay as typed.
    const settingsFile = path.join(folder, ".vscode", "settings.json");
    const settings = JSON.parse(fs.readFileSync(settingsFile, "utf8"));
    settings["[sqlx]"] = { "editor.formatOnSave": true, "editor.defaultFormatter": "dfdtools.dfd-dataform" };
    fs.writeFileSync(settingsFile, JSON.stringify(settings, null, 2) + "\n");
    const messy =
      'config {\n  type: "view",\n  description: "AoT view on top of a JiT table."\n}\n\n' +
      'select country,sum(clicks) as clicks from ${ref("daily_clicks")} group by country order by clicks desc\n';
    // What it must become: the bundled dfd's own `dfd format` of the same text.
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "dfd-e2e-format-"));
    const copy = path.join(scratch, "top_countries.sqlx");
    fs.writeFileSync(copy, messy);
    execFileSync(env.DFD_E2E_DFD, ["format", "--quiet", copy], { stdio: ["ignore", "ignore", "pipe"] });
    const want = fs.readFileSync(copy, "utf8");
    fs.rmSync(scratch, { recursive: true, force: true });
    if (want === messy || !/^SELECT$/m.test(want)) throw new Error(`dfd format did not format the messy SQL: ${short(want, 300)}`);
    const file = path.join(folder, "definitions", "top_countries.sqlx");

    await quickOpen(page, "top_countries.sqlx");
    await sleep(1000); // the settings file change reaches the workbench
    let got = "";
    const end = Date.now() + 60000;
    for (let attempt = 1; ; attempt++) {
      await focusEditor(page);
      await page.keyboard.press("Control+A");
      await page.keyboard.insertText(messy);
      await waitFor("the messy text in the editor", () => editorText(page), (t) => !!t && t.includes("select country,sum(clicks)"), { timeout: 10000 });
      await page.keyboard.press("Control+S");
      await waitFor("the save (no dirty tab)", () => activeTabDirty(page), (d) => !d, { timeout: 20000 });
      got = fs.readFileSync(file, "utf8");
      if (got === want) break;
      // The first save may come before the settings change was read.
      if (Date.now() > end || attempt >= 3) throw new Error(`saved text is not the formatted one.\nwant: ${short(want, 400)}\ngot: ${short(got, 400)}`);
      note(`format on save: not formatted yet (attempt ${attempt}); retrying`);
      await sleep(2000);
    }
    await waitFor("the formatted SQL on screen", () => editorText(page), (t) => !!t && /^SELECT$/m.test(t) && /^GROUP BY country$/m.test(t), { timeout: 10000 });
    const p = await waitNoProblems(page);
    const g = await waitFor(
      "the graph of the formatted top_countries, daily_clicks upstream, no error",
      () => graphContent(page),
      (g) => !!g && focusIs(g, C + "top_countries") && node(g, C + "daily_clicks")?.column === -1 && g.errors.length === 0,
      { timeout: 30000, interval: 1000 },
    );
    return `${want.split("\n").filter(Boolean).length} lines as dfd format writes them; ${short(p.t, 80)}; graph ${g.nodes.length} nodes`;
  });

  await step(page, "l. Changes vs main: the formatted top_countries.sqlx is a layout-only change", async () => {
    // The workspace is a git repository whose main is the fixture as copied (run.sh); step k
    // saved top_countries.sqlx as dfd format writes it: a change of layout only.
    await quickOpen(page, "top_countries.sqlx");
    await runCommand(page, "Dataform: Changes vs main");
    const what = await waitFor(
      "the changes quick pick: top_countries, metadata-only, SQL layout only",
      () =>
        page.evaluate(() => {
          const w = document.querySelector(".quick-input-widget");
          const title = w && w.offsetParent !== null ? (w.querySelector(".quick-input-title")?.textContent || "") : "";
          const rows = [...document.querySelectorAll(".quick-input-list .monaco-list-row")].map((r) => r.innerText || "");
          return { title, rows };
        }),
      (v) =>
        v.title.includes("→ working tree: 0 breaking, 0 non-breaking, 1 metadata-only") &&
        v.rows.some((r) => r.includes("top_countries") && r.includes("SQL layout only")),
      { timeout: 90000, interval: 500 },
    );
    await screenshot(page, "l-changes-vs-main");
    await closeQuickInput(page);
    return `${what.title}: ${short(what.rows.map((r) => r.replace(/\s+/g, " ")).join(" | "), 300)}`;
  });
}

async function scenarioNoDataform(page, folder) {
  await step(page, "h1. folder without a Dataform project: status bar says so", async () => {
    await openFolder(page, folder);
    return waitFor('status bar "dfd: no Dataform project"', () => statusText(page), (t) => !!t && t.includes("dfd: no Dataform project"), {
      timeout: 90000,
    });
  });
  await step(page, "h1. folder without a Dataform project: a notification explains it", async () => {
    const t = await waitNotification(page, "about no Dataform project", /no Dataform project/);
    return short(t, 200);
  });
}

async function scenarioNoCore(page, folder) {
  const name = path.basename(folder);
  await step(page, "h3. project without @dataform/core: status bar shows an error", async () => {
    await openFolder(page, folder);
    return waitFor(
      `status bar "dfd: ${name} · <error about the core>"`,
      () => statusText(page),
      (t) => !!t && t.includes(`dfd: ${name}`) && /core/i.test(t.replace(`dfd: ${name}`, "")),
      { timeout: 90000 },
    );
  });
  await step(page, "h3. project without @dataform/core: the Problems panel explains the missing core", async () => {
    const t = await waitFor(
      "a problem about @dataform/core in the Problems panel",
      () => problemsText(page),
      (t) => /workflow_settings\.yaml/.test(t) && /@dataform\/core|dataformCoreVersion/.test(t),
      { timeout: 60000 },
    );
    return short(t.split("\n").filter((l) => /core/i.test(l))[0] || t, 200);
  });
}

async function scenarioNoBinary(page, folder) {
  await step(page, "h2. dfd.path pointing nowhere, no bundled dfd: a notification tells how to install", async () => {
    await openFolder(page, folder);
    await quickOpen(page, "top_countries.sqlx"); // activates the extension on a .sqlx file too
    const t = await waitNotification(page, "about the missing dfd binary", /^(?=[\s\S]*dfd\.path[\s\S]*does not exist)(?=[\s\S]*How to install)/, 90000);
    return short(t, 240);
  });
  await step(page, "h2. dfd.path pointing nowhere: status bar says dfd: stopped", async () =>
    waitFor('status bar "dfd: stopped"', () => statusText(page), (t) => !!t && t.includes("dfd: stopped"), { timeout: 30000 }),
  );
}

// Data previews against the BigQuery emulator (run.sh starts it and points
// the folder's dfd.bigquery.endpoint at it): the "Preview data" lens is
// there, and the command opens the Dataform Data panel with the query's
// rows as the emulator computed them — types, NULL, STRUCT and ARRAY.
async function scenarioData(page, folder) {
  const name = path.basename(folder);
  await step(page, "m. project on BigQuery (the emulator): status bar shows it", async () => {
    await openFolder(page, folder);
    return waitFor(`status bar "dfd: ${name}"`, () => statusText(page), (t) => !!t && t.includes(`dfd: ${name}`), { timeout: 120000 });
  });
  await step(page, "m. open order_view.sqlx: Preview data and Open in BigQuery code lenses", async () => {
    await quickOpen(page, "order_view.sqlx");
    await waitFor("editor text", () => editorText(page), (t) => !!t && t.includes("STRUCT("));
    return waitFor(
      'code lenses "Preview data" and "Open in BigQuery"',
      () => page.evaluate(() => [...document.querySelectorAll(".codelens-decoration")].map((e) => e.textContent || "").join(" | ")),
      (t) => /Preview data/.test(t) && /Open in BigQuery/.test(t),
      { timeout: 90000 },
    );
  });
  // The cost lens: BigQuery's (the emulator's) dry run of the view's
  // query, in bytes and dollars; the figures themselves are checked
  // against a recording stand-in in cmd/dfd and daemon.
  await step(page, "m. the cost code lens shows the dry run's bytes", async () =>
    waitFor(
      'a code lens "≈ … B · $…"',
      () => page.evaluate(() => [...document.querySelectorAll(".codelens-decoration")].map((e) => e.textContent || "").join(" | ")),
      (t) => /≈ \d[\d.]* (B|KiB|MiB|GiB) · (\$\d+\.\d\d|<\$0\.01)/.test(t),
      { timeout: 90000 },
    ),
  );
  await step(page, "m. Preview data opens the Dataform Data panel with the emulator's rows", async () => {
    await focusEditor(page);
    await runCommand(page, "Dataform: Preview Data (Run the Action's Query)");
    const r = await waitFor(
      "the Dataform Data panel with 2 rows",
      () => rowsContent(page),
      (r) => !!r && (r.rows.length === 2 || r.errors.length > 0),
      { timeout: 90000, interval: 1000 },
    );
    if (r.errors.length) throw new Error(`the panel says: ${r.errors.join(" / ")}`);
    const want = {
      columns: ["id INTEGER", "name STRING", "buyer STRUCT<n STRING>", "ids ARRAY<INTEGER>", "nothing STRING"],
      rows: [
        ["1", "Ann", '{"n":"Ann"}', "[1,2]", "NULL"],
        ["2", "Bo", '{"n":"Bo"}', "[2,3]", "NULL"],
      ],
    };
    if (JSON.stringify({ columns: r.columns, rows: r.rows }) !== JSON.stringify(want)) {
      throw new Error(`got ${JSON.stringify({ columns: r.columns, rows: r.rows })}, want ${JSON.stringify(want)}`);
    }
    if (!/job dfd-rows-/.test(r.head) || !/processed/.test(r.head)) throw new Error(`header: ${r.head}`);
    return short(`${r.head} · ${r.columns.join(", ")}`, 240);
  });
}

const SCENARIOS = { project: scenarioProject, nodataform: scenarioNoDataform, nocore: scenarioNoCore, nobinary: scenarioNoBinary, data: scenarioData };

// ---- main ------------------------------------------------------------------------------

async function main() {
  writeResult();
  const context = await chromium.launchPersistentContext(env.DFD_E2E_PROFILE, {
    executablePath: env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    viewport: { width: 1600, height: 1000 },
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--disable-dev-shm-usage",
    ],
  });
  context.setDefaultTimeout(30000);
  const page = context.pages()[0] || (await context.newPage());
  page.on("dialog", (d) => d.accept().catch(() => {}));
  page.on("pageerror", (e) => note(`page error: ${e.message.split("\n")[0]}`));
  try {
    for (let i = 0; i < scenarios.length; i++) {
      const fn = SCENARIOS[scenarios[i]];
      if (!fn) {
        await step(page, `unknown scenario ${scenarios[i]}`, async () => {
          throw new Error("no such scenario");
        });
        continue;
      }
      try {
        await fn(page, folders[i]);
      } catch (e) {
        await step(page, `scenario ${scenarios[i]}`, async () => {
          throw e;
        });
      }
    }
  } finally {
    await context.close().catch(() => {});
  }
}

main()
  .catch((e) => {
    failed++;
    results.push({ name: "driver", ok: false, detail: String(e && e.stack ? e.stack : e) });
    console.log(`FAIL ${session}: driver: ${short(e && e.message, 1000)}`);
  })
  .finally(() => {
    writeResult();
    process.exit(failed ? 1 : 0);
  });
