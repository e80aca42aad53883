// The Dataform Dependency Graph webview's script: clicks (and Enter/Space)
// on a node open its file, on its "lineage" button the column lineage, the
// depth buttons redraw; updates from the extension replace #root's HTML.
(function () {
  const vscode = acquireVsCodeApi();
  const root = document.getElementById("root");

  function activate(target) {
    if (!(target instanceof Element)) return false;
    const depth = target.closest("button.depth");
    if (depth) {
      vscode.postMessage({ type: "depth", depth: depth.getAttribute("data-depth") || "" });
      return true;
    }
    const node = target.closest("g.node");
    if (!node) return false;
    const uri = node.getAttribute("data-uri") || "";
    const name = node.getAttribute("data-name") || "";
    if (target.closest("g.lineage")) {
      vscode.postMessage({ type: "lineage", uri, name });
    } else if (uri) {
      vscode.postMessage({ type: "open", uri, name });
    }
    return true;
  }

  document.addEventListener("click", (ev) => {
    if (activate(ev.target)) ev.preventDefault();
  });
  document.addEventListener("keydown", (ev) => {
    if ((ev.key === "Enter" || ev.key === " ") && activate(ev.target)) ev.preventDefault();
  });

  /**
   * Shrinks a graph wider than the panel to its width, down to 75% (text
   * stays readable); wider still, it scrolls. SVG attributes, not styles:
   * the CSP allows no inline style.
   */
  const MIN_SCALE = 0.75;
  function fit() {
    const svg = document.querySelector("svg.graph");
    const canvas = document.querySelector(".canvas");
    if (!svg || !canvas) return;
    const box = (svg.getAttribute("viewBox") || "").split(/\s+/).map(Number);
    const w = box[2];
    const h = box[3];
    if (!(w > 0 && h > 0)) return;
    const avail = canvas.clientWidth;
    const scale = avail > 0 ? Math.max(MIN_SCALE, Math.min(1, avail / w)) : 1;
    svg.setAttribute("width", String(Math.floor(w * scale)));
    svg.setAttribute("height", String(Math.floor(h * scale)));
  }
  let resizeTimer;
  window.addEventListener("resize", () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(fit, 100);
  });

  /** Scrolls the file's first action into the middle (a new file: the graph is centred on it). */
  function centre() {
    const focus = document.querySelector("g.node.role-focus");
    if (focus && focus.scrollIntoView) focus.scrollIntoView({ block: "center", inline: "center" });
  }

  window.addEventListener("message", (ev) => {
    const msg = ev.data || {};
    if (msg.type !== "update") return;
    const sameFile = root.getAttribute("data-uri") === msg.uri;
    const canvas = document.querySelector(".canvas");
    const pos = { x: window.scrollX, y: window.scrollY, cx: canvas ? canvas.scrollLeft : 0, cy: canvas ? canvas.scrollTop : 0 };
    // Keep the keyboard focus on the same node across a redraw.
    const focused = document.activeElement && document.activeElement.closest ? document.activeElement.closest("g.node") : null;
    const focusedName = focused ? focused.getAttribute("data-name") : null;
    root.innerHTML = msg.html;
    root.setAttribute("data-uri", msg.uri || "");
    fit();
    if (sameFile) {
      window.scrollTo(pos.x, pos.y);
      const c = document.querySelector(".canvas");
      if (c) {
        c.scrollLeft = pos.cx;
        c.scrollTop = pos.cy;
      }
    } else {
      window.scrollTo(0, 0);
      centre();
    }
    if (focusedName) {
      for (const n of document.querySelectorAll("g.node")) {
        if (n.getAttribute("data-name") === focusedName) {
          n.focus({ preventScroll: true });
          break;
        }
      }
    }
    vscode.setState({ uri: msg.uri });
  });

  fit();
  centre();
  vscode.postMessage({ type: "ready" });
})();
