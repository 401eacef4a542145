import { useApp } from "./app-context.ts";
import { Notice } from "./ui.tsx";

/**
 * Recurring schedules: no adapter offers them in this version (GET /'s notYetSupported),
 * so the view says so. (Workers have a view of their own: workers-view.tsx.)
 */
export function SchedulesView() {
  const { can } = useApp();
  const why = can("schedules");
  return (
    <>
      <div class="page-head">
        <h1>Schedules</h1>
      </div>
      <p class="muted">Recurring jobs: task, schedule, next and last run.</p>
      <Notice>
        {why ?? "This version of tasklane has no schedules to show."} This page fills in when the
        API offers them.
      </Notice>
    </>
  );
}
