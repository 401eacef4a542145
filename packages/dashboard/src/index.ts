/**
 * `@tasklane/dashboard`: the tasklane web UI, served by `@tasklane/http`'s handler:
 * `createManagementHandler({ …, dashboard: createDashboard() })`.
 */
export type { Dashboard, DashboardAuth, DashboardOptions } from "./create-dashboard.ts";
export { createDashboard } from "./create-dashboard.ts";
