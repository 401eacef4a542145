/** The package version; it is part of every script's name and source (so of its SHA). */
export const VERSION = "0.1.0";
