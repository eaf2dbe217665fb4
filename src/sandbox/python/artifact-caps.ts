/** Files an execution returns at most, and their total size (base64 grows it by a third; lines are 64 MiB). */
export const MAX_ARTIFACTS = 1000;
export const MAX_ARTIFACT_BYTES = 32 * 1024 * 1024;
