/**
 * tfjs greets every Node process that uses its pure-JS backend with a multi-line "Hi, looks like you are running
 * TensorFlow.js in Node.js" banner (and prints a few other notices) through its warn(), which production mode
 * silences. In tfjs 4.22 the PROD flag gates only those messages, no kernel or numeric behaviour. Called at load
 * time by the modules that start a backend, explicitly (lib/backend.ts) or implicitly (the runner asks tfjs which
 * backend runs, which starts the default one in a process that chose none).
 *
 * A named function rather than a side-effect-only module (`import './quiet-tfjs'`): tslab's TypeScript crashes
 * in declaration emit ("Cannot read properties of undefined (reading 'parent')") on a bare import of a local
 * file, so every notebook's first cell would fail.
 */
import * as tf from '@tensorflow/tfjs';

export function quietTfjs(): void {
  tf.env().set('PROD', true);
}
