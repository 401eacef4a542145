/** The version of @tasklane/core (a test keeps it equal to package.json's): workers register it. */
export const VERSION = "0.1.0";
