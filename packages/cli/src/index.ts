/**
 * `@tasklane/cli`: the `tasklane` command (see its README), and what it is made of for
 * those who run it from code or type its config module.
 */
export { type CliIo, runCli } from "./cli.ts";
export {
  loadConfigModule,
  resolveSetup,
  type Setup,
  type SetupOptions,
  type TasklaneCliConfig,
} from "./config.ts";
export {
  ADAPTER_KINDS,
  type AdapterKind,
  adapterKindFrom,
  createAdapterFromEnvironment,
  type Environment,
} from "./environment.ts";
export {
  CommandFailedError,
  EXIT_CODES,
  type ExitCode,
  InterruptedError,
  NotAvailableError,
  UsageError,
} from "./errors.ts";
