import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { type Api, ApiError } from "./api.ts";
import { AppContext, type AppCtx, type ConfirmRequest, useApp, useLive } from "./app-context.ts";
import { createCan } from "./capabilities.ts";
import type { PageConfig } from "./config.ts";
import { FailuresView } from "./failures-view.tsx";
import { JobView } from "./job-view.tsx";
import { JobsView } from "./jobs-view.tsx";
import { LaneView } from "./lane-view.tsx";
import { LanesView } from "./lanes-view.tsx";
import { createLive } from "./live.ts";
import { href, navigate, type Route, useRoute } from "./router.ts";
import { SchedulesView } from "./schedules-view.tsx";
import type { Info, Job } from "./types.ts";
import { ConfirmDialog, ErrorNotice, Notice } from "./ui.tsx";
import { WorkersView } from "./workers-view.tsx";

function SignIn(props: { api: Api; config: PageConfig; error: ApiError; onToken: () => void }) {
  const [token, setToken] = useState("");
  const rejected = props.error.status === 401 && props.api.token() !== null;
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => input.current?.focus(), []);
  if (props.config.auth.kind === "cookie") {
    const url = props.config.auth.signInUrl;
    return (
      <main class="signin" id="main">
        <h1>{props.config.title}</h1>
        <p>The management API needs you signed in ({props.error.message}).</p>
        {url === null ? null : (
          <p>
            <a class="btn btn-primary" href={url}>
              Sign in
            </a>
          </p>
        )}
      </main>
    );
  }
  return (
    <main class="signin" id="main">
      <h1>{props.config.title}</h1>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (token.trim() === "") return;
          props.api.setToken(token.trim());
          props.onToken();
        }}
      >
        <p>
          The management API needs a token. It is kept in this tab only (sessionStorage) and sent
          with each call.
        </p>
        <label class="field field-block">
          <span>Token</span>
          <input
            ref={input}
            type="password"
            autocomplete="off"
            value={token}
            onInput={(e) => setToken((e.target as HTMLInputElement).value)}
            aria-invalid={rejected}
            aria-describedby={rejected ? "token-error" : undefined}
          />
        </label>
        {rejected ? (
          <p class="notice notice-error" id="token-error" role="alert">
            That token was not accepted ({props.error.message}).
          </p>
        ) : null}
        <button type="submit" class="btn btn-primary">
          Sign in
        </button>
      </form>
    </main>
  );
}

function LiveBadge() {
  const state = useLive();
  const { info } = useApp();
  const text =
    state.connection === "live"
      ? "Live"
      : state.connection === "unavailable"
        ? "Polling"
        : state.connection === "retrying"
          ? "Reconnecting"
          : "Connecting";
  const title =
    state.connection === "live"
      ? `Following ${info.adapter.capabilities.lifecycleEvents === false ? "this server's" : "every process's"} job events`
      : state.connection === "unavailable"
        ? `No event stream (${state.connectionError?.message ?? ""}); counts are re-read every 5 s`
        : "Connecting to the event stream";
  return (
    <span class={`live live-${state.connection}`} title={title}>
      <span class="dot" aria-hidden="true" />
      {text}
      <span class="sr-only">: {title}</span>
    </span>
  );
}

/** Find a job by id in every lane (GET /jobs/{id}). */
function FindJob() {
  const { api, can, notify } = useApp();
  const [id, setId] = useState("");
  if (can("get") !== null) return null;
  return (
    <search class="find" aria-label="Find a job by id">
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          const wanted = id.trim();
          if (wanted === "") return;
          try {
            const { jobs } = await api.get<{ jobs: Job[] }>(`jobs/${encodeURIComponent(wanted)}`);
            const first = jobs[0];
            if (first === undefined) notify(`No job ${wanted} in any lane`, "error");
            else {
              if (jobs.length > 1)
                notify(`${jobs.length} lanes have a job ${wanted}: showing ${first.lane}`);
              navigate({ view: "job", lane: first.lane, id: first.id });
              setId("");
            }
          } catch (error) {
            notify(`Could not look for ${wanted}: ${(error as Error).message}`, "error");
          }
        }}
      >
        <label>
          <span class="sr-only">Job id</span>
          <input
            type="search"
            placeholder="Job id"
            value={id}
            onInput={(e) => setId((e.target as HTMLInputElement).value)}
          />
        </label>
      </form>
    </search>
  );
}

const NAV: Array<{ label: string; route: Route; match: Route["view"][] }> = [
  { label: "Lanes", route: { view: "lanes" }, match: ["lanes", "lane", "jobs", "job"] },
  { label: "Failures", route: { view: "failures" }, match: ["failures"] },
  { label: "Workers", route: { view: "workers" }, match: ["workers"] },
  { label: "Schedules", route: { view: "schedules" }, match: ["schedules"] },
];

function Shell(props: { config: PageConfig; signOut: (() => void) | null }) {
  const route = useRoute();
  const { info, live } = useApp();
  const state = useLive();
  const failed = state.lanes?.reduce((n, l) => n + l.counts.failed, 0) ?? 0;
  const main = useRef<HTMLElement>(null);
  // A new view moves the focus to its content, as a page load would (for keyboards and screen readers).
  const first = useRef(true);
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    main.current?.focus({ preventScroll: false });
    window.scrollTo(0, 0);
  }, [href(route)]);
  useEffect(() => () => live.close(), [live]);
  return (
    <>
      {/* A button, not a link to #main: the hash is the router's. */}
      <button type="button" class="skip" onClick={() => main.current?.focus()}>
        Skip to content
      </button>
      <header class="top">
        <a class="brand" href={href({ view: "lanes" })}>
          <span class="logo" aria-hidden="true" />
          {props.config.title}
        </a>
        <nav class="nav" aria-label="Sections">
          {NAV.map((n) => (
            <a
              key={n.label}
              href={href(n.route)}
              class={n.match.includes(route.view) ? "current" : undefined}
              aria-current={n.match.includes(route.view) ? "page" : undefined}
            >
              {n.label}
              {n.label === "Failures" && failed > 0 ? (
                <span class="nav-count">
                  <span class="sr-only">, </span>
                  {failed > 9_999 ? "9,999+" : failed.toLocaleString("en")}
                  <span class="sr-only"> failed</span>
                </span>
              ) : null}
            </a>
          ))}
        </nav>
        <div class="top-right">
          <FindJob />
          <span class="badge badge-adapter" title="The backend's adapter">
            {info.adapter.name}
          </span>
          {info.scope === "read" ? (
            <span
              class="badge badge-readonly"
              title="Your access is read-only: actions are disabled"
            >
              read-only
            </span>
          ) : null}
          <LiveBadge />
          {props.signOut ? (
            <button type="button" class="btn btn-plain btn-small" onClick={props.signOut}>
              Sign out
            </button>
          ) : null}
        </div>
      </header>
      <main id="main" ref={main} tabIndex={-1}>
        {state.error?.status === 401 ? (
          <Notice kind="error">
            The management API no longer accepts this session ({state.error.message}).{" "}
            {props.signOut ? (
              <button type="button" class="btn btn-plain btn-small" onClick={props.signOut}>
                Sign in again
              </button>
            ) : props.config.auth.kind === "cookie" && props.config.auth.signInUrl !== null ? (
              <a href={props.config.auth.signInUrl}>Sign in again</a>
            ) : null}
          </Notice>
        ) : null}
        <View route={route} />
      </main>
    </>
  );
}

function View(props: { route: Route }) {
  const r = props.route;
  switch (r.view) {
    case "lanes":
      return <LanesView />;
    case "lane":
      return <LaneView lane={r.lane} />;
    case "jobs":
      return (
        <JobsView key={`${r.lane}/${r.state}`} lane={r.lane} state={r.state} filter={r.filter} />
      );
    case "job":
      return <JobView key={`${r.lane}/${r.id}`} lane={r.lane} id={r.id} />;
    case "failures":
      return <FailuresView />;
    case "workers":
      return <WorkersView />;
    case "schedules":
      return <SchedulesView />;
    default:
      return (
        <Notice kind="warn">
          Nothing at #{r.hash}. <a href={href({ view: "lanes" })}>Go to the lanes</a>.
        </Notice>
      );
  }
}

interface Toast {
  id: number;
  message: string;
  kind: "ok" | "error";
}

export function App(props: { api: Api; config: PageConfig }) {
  const { api, config } = props;
  const [info, setInfo] = useState<Info | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [attempt, setAttempt] = useState(0);
  const [confirmRequest, setConfirmRequest] = useState<ConfirmRequest | null>(null);
  const resolveConfirm = useRef<((ok: boolean) => void) | null>(null);
  const [toasts, setToasts] = useState<Toast[]>([]);

  useEffect(() => {
    const controller = new AbortController();
    api.get<Info>("", controller.signal).then(
      (i) => {
        setInfo(i);
        setError(null);
      },
      (e: unknown) => {
        if (!controller.signal.aborted)
          setError(e instanceof ApiError ? e : new ApiError(0, "NETWORK", String(e)));
      },
    );
    return () => controller.abort();
  }, [api, attempt]);

  const ctx = useMemo<AppCtx | null>(() => {
    if (info === null) return null;
    let toastId = 0;
    return {
      api,
      info,
      can: createCan(info),
      live: createLive(api),
      confirm(request) {
        resolveConfirm.current?.(false);
        setConfirmRequest(request);
        return new Promise((resolve) => {
          resolveConfirm.current = resolve;
        });
      },
      notify(message, kind = "ok") {
        const id = ++toastId;
        setToasts((t) => [...t.slice(-3), { id, message, kind }]);
        setTimeout(
          () => setToasts((t) => t.filter((x) => x.id !== id)),
          kind === "error" ? 10_000 : 5_000,
        );
      },
    };
  }, [api, info]);

  if (ctx === null) {
    if (error !== null && error.status === 401) {
      return (
        <SignIn api={api} config={config} error={error} onToken={() => setAttempt((n) => n + 1)} />
      );
    }
    return (
      <main class="signin" id="main">
        <h1>{config.title}</h1>
        {error === null ? (
          <p class="muted">Connecting to the management API…</p>
        ) : (
          <ErrorNotice error={error} what="The management API did not answer" />
        )}
        {error !== null ? (
          <button type="button" class="btn btn-plain" onClick={() => setAttempt((n) => n + 1)}>
            Try again
          </button>
        ) : null}
      </main>
    );
  }
  const signOut =
    config.auth.kind === "token" && api.token() !== null
      ? () => {
          api.setToken(null);
          ctx.live.close();
          setInfo(null);
          setAttempt((n) => n + 1);
        }
      : null;
  return (
    <AppContext.Provider value={ctx}>
      <Shell config={config} signOut={signOut} />
      <ConfirmDialog
        request={confirmRequest}
        onClose={(ok) => {
          setConfirmRequest(null);
          resolveConfirm.current?.(ok);
          resolveConfirm.current = null;
        }}
      />
      <div class="toasts" aria-live="polite">
        {toasts.map((t) => (
          <p key={t.id} class={`toast toast-${t.kind}`}>
            {t.message}
          </p>
        ))}
      </div>
    </AppContext.Provider>
  );
}
