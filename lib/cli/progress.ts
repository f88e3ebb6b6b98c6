/**
 * The progress bar lives in lib/util/progress.ts (training code uses it too, and must not depend on the
 * command line); re-exported here for the commands.
 */
export { ProgressBar, formatDuration } from '../util/progress';
export type { ProgressOptions } from '../util/progress';
