/** What the server put in the page (src/page.ts). */
export interface PageConfig {
  api: string;
  title: string;
  auth:
    | { kind: "token"; header: string; scheme: string }
    | { kind: "cookie"; signInUrl: string | null };
}

export function readConfig(): PageConfig {
  const element = document.getElementById("tasklane-config");
  return JSON.parse(element?.textContent ?? "{}") as PageConfig;
}
