// The HTML document of dfd's webviews (the compiled preview, the dependency
// graph): one strict Content-Security-Policy for both — nothing from the
// network, no inline script or style attribute; the page's one stylesheet
// and its script come by nonce.
import { escapeHtml } from "./sqlTokenizer";

export interface WebviewPage {
  nonce: string;
  cspSource: string;
  scriptUri: string;
  title: string;
  css: string;
  /** data-* attributes of the <main id="root"> element, in order. */
  data: [string, string][];
  body: string;
}

export function renderWebviewPage(o: WebviewPage): string {
  const csp = [
    "default-src 'none'",
    `style-src 'nonce-${o.nonce}'`,
    `script-src 'nonce-${o.nonce}'`,
    `img-src ${o.cspSource} data:`,
    `font-src ${o.cspSource}`,
  ].join("; ");
  const data = o.data.map(([k, v]) => ` data-${k}="${escapeHtml(v)}"`).join("");
  return (
    `<!DOCTYPE html><html lang="en"><head><meta charset="UTF-8">` +
    `<meta http-equiv="Content-Security-Policy" content="${escapeHtml(csp)}">` +
    `<meta name="viewport" content="width=device-width, initial-scale=1.0">` +
    `<title>${escapeHtml(o.title)}</title><style nonce="${escapeHtml(o.nonce)}">${o.css}</style></head>` +
    `<body><main id="root"${data}>${o.body}</main>` +
    `<script nonce="${escapeHtml(o.nonce)}" src="${escapeHtml(o.scriptUri)}"></script></body></html>`
  );
}
