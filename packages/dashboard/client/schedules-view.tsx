import { useApp, usePolledGet, useTick } from "./app-context.ts";
import { fmtAgo, fmtBound, fmtInt, fmtTime } from "./format.ts";
import { href } from "./router.ts";
import type { Schedule } from "./types.ts";
import { ActionButton, ErrorNotice, Notice } from "./ui.tsx";

/** How often the schedules are read again (their next slot and run count move on their own). */
const POLL_MS = 2_000;

/** An instant as text relative to now, with the exact time in a <time> element. */
function When(props: { at: number | null | undefined; now: number; none: string }) {
  if (props.at === null || props.at === undefined) return <span class="muted">{props.none}</span>;
  return (
    <time dateTime={new Date(props.at).toISOString()} title={fmtTime(props.at)}>
      {fmtAgo(props.at, props.now)}
    </time>
  );
}

/**
 * Recurring schedules (capability schedules), every lane's: when each runs next, its last
 * slot and how many runs it has put, with pause / resume and remove. Schedules are created
 * in code (`tl.schedules.upsert`, which takes the task), so the page does not create them.
 */
export function SchedulesView() {
  const { api, can, confirm, notify } = useApp();
  const why = can("schedules");
  const now = useTick(1_000);
  const result = usePolledGet<{ schedules: Schedule[] }>(
    "schedules",
    why,
    { schedules: [] },
    POLL_MS,
  );
  const writeWhy = can("editSchedules");
  const schedules = result.data?.schedules;
  const paused = schedules?.filter((s) => s.paused).length ?? 0;

  const setPaused = async (s: Schedule) => {
    const verb = s.paused ? "resume" : "pause";
    try {
      await api.send("POST", `schedules/${encodeURIComponent(s.id)}/${verb}`);
      notify(`Schedule ${s.id} ${s.paused ? "resumed" : "paused"}`);
    } catch (error) {
      notify(`Could not ${verb} schedule ${s.id}: ${(error as Error).message}`, "error");
    }
    result.reload();
  };
  const remove = async (s: Schedule) => {
    const ok = await confirm({
      title: "Remove this schedule?",
      body: `Schedule ${s.id} (${s.task} in ${s.lane}) puts no more jobs. The jobs it has put stay. Only the code that made it can make it again.`,
      confirm: "Remove",
      danger: true,
    });
    if (!ok) return;
    try {
      await api.send("DELETE", `schedules/${encodeURIComponent(s.id)}`);
      notify(`Schedule ${s.id} removed`);
    } catch (error) {
      notify(`Could not remove schedule ${s.id}: ${(error as Error).message}`, "error");
    }
    result.reload();
  };

  return (
    <>
      <div class="page-head">
        <h1>Schedules</h1>
        <span class="muted small">
          {schedules === undefined || why !== null
            ? "Recurring jobs: task, schedule, next and last run"
            : `${fmtInt(schedules.length)} schedule${schedules.length === 1 ? "" : "s"}, ${fmtInt(paused)} paused · read every ${POLL_MS / 1_000} s`}
        </span>
      </div>
      {why !== null ? (
        <Notice>{why} Recurring schedules are not listed.</Notice>
      ) : (
        <>
          <ErrorNotice error={result.error} what="Reading the schedules failed" />
          {schedules === undefined ? (
            <div class="placeholder" style={{ height: "160px" }} />
          ) : schedules.length === 0 ? (
            <p class="empty">No schedule. They are made in code, with tl.schedules.upsert.</p>
          ) : (
            <div class="table-wrap">
              <table class="table schedules-table" aria-label="Schedules">
                <thead>
                  <tr>
                    <th scope="col">Schedule</th>
                    <th scope="col">Lane</th>
                    <th scope="col">Task</th>
                    <th scope="col">Cron or interval</th>
                    <th scope="col">Time zone</th>
                    <th scope="col">Next run</th>
                    <th scope="col">Last slot</th>
                    <th scope="col" class="n">
                      Runs
                    </th>
                    <th scope="col">State</th>
                    <th scope="col">
                      <span class="sr-only">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {schedules.map((s) => (
                    <tr key={s.id}>
                      <th scope="row" class="mono">
                        {s.id}
                      </th>
                      <td>
                        <a href={href({ view: "lane", lane: s.lane })}>{s.lane}</a>
                      </td>
                      <td>{s.task}</td>
                      <td class={s.spec.cron === undefined ? undefined : "mono"}>
                        {s.spec.cron ?? `every ${fmtBound(s.spec.everyMs ?? 0)}`}
                      </td>
                      {/* A cron is read in UTC unless given a zone; an interval has none. */}
                      <td>{s.spec.cron === undefined ? "–" : (s.spec.timezone ?? "UTC")}</td>
                      <td>
                        {/* No next slot: paused, or past its end or run limit. */}
                        <When at={s.nextAt} now={now} none={s.paused ? "paused" : "none"} />
                      </td>
                      <td>
                        <When at={s.lastSlotAt} now={now} none="none yet" />
                      </td>
                      <td class="n">
                        {fmtInt(s.runs)}
                        {s.spec.limit === undefined ? "" : ` / ${fmtInt(s.spec.limit)}`}
                      </td>
                      <td>
                        {s.paused ? (
                          <span class="badge badge-paused">paused</span>
                        ) : (
                          <span class="badge badge-running">active</span>
                        )}
                      </td>
                      <td>
                        <ActionButton
                          why={writeWhy}
                          showWhy={false}
                          label={`${s.paused ? "Resume" : "Pause"} schedule ${s.id}`}
                          onClick={() => setPaused(s)}
                        >
                          {s.paused ? "Resume" : "Pause"}
                        </ActionButton>{" "}
                        <ActionButton
                          why={writeWhy}
                          showWhy={false}
                          kind="danger"
                          label={`Remove schedule ${s.id}`}
                          onClick={() => remove(s)}
                        >
                          Remove
                        </ActionButton>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          {writeWhy !== null ? <Notice>{writeWhy}</Notice> : null}
          <p class="muted small">
            Workers put each schedule's jobs at its slots. A paused schedule puts none; resumed, it
            starts again from its first slot after now (the slots it missed are not caught up).
            Removing one leaves the jobs it has put.
          </p>
        </>
      )}
    </>
  );
}
