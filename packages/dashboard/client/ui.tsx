import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import type { ApiError } from "./api.ts";
import type { ConfirmRequest } from "./app-context.ts";
import type { JobState } from "./types.ts";

/** A note that says why something is not here (unsupported, read-only, …). */
export function Notice(props: {
  children: ComponentChildren;
  kind?: "info" | "error" | "warn";
  id?: string;
}) {
  return (
    <p
      class={`notice notice-${props.kind ?? "info"}`}
      id={props.id}
      role={props.kind === "error" ? "alert" : undefined}
    >
      {props.children}
    </p>
  );
}

export function ErrorNotice(props: { error: ApiError | undefined | null; what?: string }) {
  if (props.error === undefined || props.error === null) return null;
  const e = props.error;
  return (
    <Notice kind="error">
      {props.what === undefined ? "" : `${props.what}: `}
      {e.message}
      {e.status > 0 ? (
        <span class="muted">
          {" "}
          ({e.status} {e.code})
        </span>
      ) : null}
    </Notice>
  );
}

export function StateBadge(props: { state: JobState | string }) {
  return <span class={`badge state-${props.state}`}>{props.state}</span>;
}

let reasonIds = 0;

/**
 * A button that is disabled, with the reason beside it, when `why` says it cannot be used:
 * visible to everyone, and tied to the button by aria-describedby for screen readers.
 */
export function ActionButton(props: {
  why: string | null;
  onClick: () => void | Promise<void>;
  children: ComponentChildren;
  kind?: "primary" | "danger" | "plain";
  busyLabel?: string;
  showWhy?: boolean;
  label?: string;
}) {
  const [busy, setBusy] = useState(false);
  const [id] = useState(() => `why-${++reasonIds}`);
  const disabled = props.why !== null || busy;
  return (
    <span class="action">
      <button
        type="button"
        class={`btn btn-${props.kind ?? "plain"}`}
        disabled={disabled}
        aria-label={props.label}
        aria-describedby={props.why !== null ? id : undefined}
        title={props.why ?? undefined}
        onClick={async () => {
          setBusy(true);
          try {
            await props.onClick();
          } finally {
            setBusy(false);
          }
        }}
      >
        {busy && props.busyLabel !== undefined ? props.busyLabel : props.children}
      </button>
      {props.why !== null ? (
        <span id={id} class={props.showWhy === false ? "sr-only" : "why"}>
          {props.why}
        </span>
      ) : null}
    </span>
  );
}

/** JSON, pretty-printed, in a scrollable block. */
export function JsonBlock(props: { value: unknown; label: string }) {
  let text: string;
  try {
    text = JSON.stringify(props.value, null, 2) ?? "undefined";
  } catch {
    text = String(props.value);
  }
  return <pre class="code">{text}</pre>;
}

/**
 * The confirmation dialog: a modal <dialog> (focus stays inside, Escape cancels). For a
 * destructive action the focus starts on Cancel, so Enter does not destroy by accident.
 */
export function ConfirmDialog(props: {
  request: ConfirmRequest | null;
  onClose: (confirmed: boolean) => void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const cancel = useRef<HTMLButtonElement>(null);
  const ok = useRef<HTMLButtonElement>(null);
  const { request } = props;
  useEffect(() => {
    const d = dialog.current;
    if (d === null) return;
    if (request !== null && !d.open) {
      d.showModal();
      (request.danger ? cancel : ok).current?.focus();
    } else if (request === null && d.open) {
      d.close();
    }
  }, [request]);
  return (
    <dialog
      ref={dialog}
      class="dialog"
      aria-labelledby="confirm-title"
      aria-describedby="confirm-body"
      onCancel={(e) => {
        e.preventDefault();
        props.onClose(false);
      }}
    >
      <h2 id="confirm-title">{request?.title}</h2>
      <p id="confirm-body">{request?.body}</p>
      <div class="dialog-actions">
        <button
          type="button"
          class="btn btn-plain"
          ref={cancel}
          onClick={() => props.onClose(false)}
        >
          Cancel
        </button>
        <button
          type="button"
          class={`btn ${request?.danger ? "btn-danger" : "btn-primary"}`}
          ref={ok}
          onClick={() => props.onClose(true)}
        >
          {request?.confirm}
        </button>
      </div>
    </dialog>
  );
}

/** Tags as small chips, each a link to the jobs with it where `href` is given. */
export function TagList(props: { tags: string[]; href?: ((tag: string) => string) | undefined }) {
  if (props.tags.length === 0) return null;
  return (
    <span class="tags">
      {props.tags.map((tag) =>
        props.href === undefined ? (
          <span class="tag" key={tag}>
            {tag}
          </span>
        ) : (
          <a class="tag" key={tag} href={props.href(tag)} title={`Jobs tagged ${tag}`}>
            {tag}
          </a>
        ),
      )}
    </span>
  );
}

/**
 * A progress value as a fraction 0..1 when it reads as one: a number (a percentage,
 * 0-100) or `{ done, total }`; undefined for anything else (shown as JSON only).
 */
export function progressFraction(value: unknown): number | undefined {
  if (typeof value === "number" && Number.isFinite(value)) {
    return Math.min(1, Math.max(0, value / 100));
  }
  if (typeof value === "object" && value !== null) {
    const { done, total } = value as { done?: unknown; total?: unknown };
    if (typeof done === "number" && typeof total === "number" && total > 0) {
      return Math.min(1, Math.max(0, done / total));
    }
  }
  return undefined;
}

/** A progress bar with its value in words, for a number or `{ done, total }`. */
export function ProgressBar(props: { value: unknown }) {
  const fraction = progressFraction(props.value);
  if (fraction === undefined) return null;
  const { done, total } = (props.value ?? {}) as { done?: number; total?: number };
  const percent = Math.round(fraction * 100);
  const words =
    typeof props.value === "number" ? `${percent}%` : `${done} of ${total} (${percent}%)`;
  return (
    <div class="progress">
      <progress max={100} value={fraction * 100} aria-label={`Progress: ${words}`} />
      <span class="num">{words}</span>
    </div>
  );
}
