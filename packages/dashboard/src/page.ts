/** What the page tells the browser code: where the API is and how to authenticate. */
export interface PageConfig {
  /** The API's base, relative to the page (`../` for a UI at `basePath/ui/`). */
  api: string;
  title: string;
  auth:
    | { kind: "token"; header: string; scheme: string }
    | { kind: "cookie"; signInUrl: string | null };
}

/** A small lane-stripes mark, inline: no request, allowed by the page's CSP (img-src data:). */
const ICON =
  "data:image/svg+xml," +
  encodeURIComponent(
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#2f6fde"/><path d="M3 5h10M3 8h7M3 11h4" stroke="#fff" stroke-width="1.6" stroke-linecap="round"/></svg>',
  );

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * The one HTML page. Asset URLs are relative (`./main-….js`), and so is the API's base,
 * so the dashboard works under any mount path and behind proxies that rewrite it. The
 * config is JSON in a non-executed script element, `<` escaped so no value can close it.
 */
export function renderPage(config: PageConfig, assets: { script: string; style: string }): string {
  const json = JSON.stringify(config).replace(/</g, "\\u003c");
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(config.title)}</title>
<link rel="icon" href="${ICON}">
<link rel="stylesheet" href="./${assets.style}">
<script type="module" src="./${assets.script}"></script>
<script type="application/json" id="tasklane-config">${json}</script>
</head>
<body>
<div id="app"><p class="boot">Loading ${escapeHtml(config.title)}…</p></div>
<noscript>The tasklane dashboard needs JavaScript.</noscript>
</body>
</html>
`;
}

/**
 * The page's Content-Security-Policy: its own scripts, styles and API only. Inline style
 * attributes are refused too (Preact and uPlot set styles through the CSSOM, which CSP
 * allows); frame-ancestors keeps the page out of other sites' frames, where its buttons
 * could be clickjacked.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");
