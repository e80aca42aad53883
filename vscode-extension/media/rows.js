// The Dataform Data webview's script: its buttons and links post to the
// extension, which copies, opens URLs and asks dfd/rows again; updates
// bring new HTML for #root.
(function () {
  const vscode = acquireVsCodeApi();
  const root = document.getElementById("root");

  document.addEventListener("click", (ev) => {
    const el = ev.target instanceof Element ? ev.target.closest("[data-action], a[data-url]") : null;
    if (!el) return;
    ev.preventDefault();
    if (el.matches("a[data-url]")) {
      vscode.postMessage({ type: "open", url: el.getAttribute("data-url") });
      return;
    }
    const action = el.getAttribute("data-action");
    vscode.postMessage({ type: action, url: el.getAttribute("data-url") || "", source: el.getAttribute("data-source") || "" });
    if (action === "copy-csv" || action === "copy-json") {
      const old = el.textContent;
      el.textContent = "Copied";
      setTimeout(() => (el.textContent = old), 1200);
    }
  });

  window.addEventListener("message", (ev) => {
    const msg = ev.data || {};
    if (msg.type === "update") {
      root.innerHTML = msg.html;
    }
  });

  vscode.postMessage({ type: "ready" });
})();
