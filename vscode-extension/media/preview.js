// The Dataform Preview webview's script: copy buttons, updates from the
// extension (new HTML for #root) and scrolling to an action.
(function () {
  const vscode = acquireVsCodeApi();
  const root = document.getElementById("root");

  function reveal(target) {
    if (!target) return;
    const sections = document.querySelectorAll("section.action");
    for (const s of sections) {
      s.classList.remove("revealed");
    }
    for (const s of sections) {
      if (s.getAttribute("data-target") === target) {
        s.classList.add("revealed");
        s.scrollIntoView({ block: "start" });
        return;
      }
    }
  }

  document.addEventListener("click", (ev) => {
    const button = ev.target instanceof Element ? ev.target.closest("button.copy") : null;
    if (!button) return;
    const block = button.closest(".sql-block");
    const pre = block && block.querySelector("pre.sql");
    if (!pre) return;
    vscode.postMessage({ type: "copy", text: pre.textContent || "" });
    const old = button.textContent;
    button.textContent = "Copied";
    setTimeout(() => (button.textContent = old), 1200);
  });

  window.addEventListener("message", (ev) => {
    const msg = ev.data || {};
    if (msg.type === "update") {
      const sameFile = root.getAttribute("data-uri") === msg.uri;
      const y = window.scrollY;
      root.innerHTML = msg.html;
      root.setAttribute("data-uri", msg.uri || "");
      root.setAttribute("data-reveal", msg.reveal || "");
      if (msg.reveal) {
        reveal(msg.reveal);
      } else if (sameFile) {
        window.scrollTo(0, y);
      } else {
        window.scrollTo(0, 0);
      }
      vscode.setState({ uri: msg.uri });
    } else if (msg.type === "reveal") {
      reveal(msg.target);
    }
  });

  reveal(root.getAttribute("data-reveal"));
  vscode.postMessage({ type: "ready" });
})();
