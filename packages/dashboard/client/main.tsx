/** The dashboard's entry: read the page's config, point the API client at it, render. */
import { render } from "preact";
import { createApi } from "./api.ts";
import { App } from "./app.tsx";
import { readConfig } from "./config.ts";
import "./styles.css";

const config = readConfig();
const root = document.getElementById("app");
if (root !== null) {
  root.textContent = "";
  render(<App api={createApi(config)} config={config} />, root);
}
