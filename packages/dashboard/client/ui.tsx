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
