/** The package version: the instrumentation scope's version on every span and metric. */
export const VERSION = "0.1.0";
