/**
 * Picks the TensorFlow.js backend at run time.
 *
 * Order: `TOOLRL_BACKEND` if set (tensorflow | wasm | cpu); else the native `tensorflow` backend when
 * `@tensorflow/tfjs-node-gpu` or `@tensorflow/tfjs-node` loads and registers it; else `wasm`. The pure-JS
 * `cpu` backend is ~100x slower than wasm for our model, so it runs only when asked for (tiny tests).
 *
 * Note: the npm override that lets danfojs-node install aliases a package named `@tensorflow/tfjs-node` to
 * plain tfjs, so "the module loads" is not enough: we check that a `tensorflow` backend got registered.
 */
import * as tf from '@tensorflow/tfjs';
import '@tensorflow/tfjs-backend-wasm';

export type BackendName = 'tensorflow' | 'wasm' | 'cpu';
const KNOWN: BackendName[] = ['tensorflow', 'wasm', 'cpu'];

let chosen: BackendName | null = null;

async function tryNative(): Promise<string | null> {
  for (const pkg of ['@tensorflow/tfjs-node-gpu', '@tensorflow/tfjs-node']) {
    try {
      const name = pkg; // a variable keeps TypeScript from requiring the (optional) package's types
      await import(name);
      if (tf.findBackendFactory('tensorflow') != null) return pkg;
    } catch {
      // not installed or its native library failed to load: fall through
    }
  }
  return null;
}

export interface BackendOptions {
  /** Backend to use; defaults to process.env.TOOLRL_BACKEND, then automatic choice. */
  backend?: string;
  /** Print which backend runs (to stderr). */
  verbose?: boolean;
}

/** Initialise tfjs once per process and return the backend in use. */
export async function initBackend(opts: BackendOptions = {}): Promise<BackendName> {
  const requested = (opts.backend ?? process.env.TOOLRL_BACKEND ?? '').trim();
  if (chosen !== null && (requested === '' || requested === chosen)) return chosen;
  let name: BackendName;
  let detail = '';
  if (requested !== '') {
    if (!KNOWN.includes(requested as BackendName)) {
      throw new Error(`TOOLRL_BACKEND / --backend: unknown backend "${requested}" (expected one of ${KNOWN.join(', ')})`);
    }
    name = requested as BackendName;
    if (name === 'tensorflow') {
      const pkg = await tryNative();
      if (pkg === null) {
        throw new Error('backend "tensorflow" requested but neither @tensorflow/tfjs-node-gpu nor @tensorflow/tfjs-node ' +
          'registers it here (see `npm run setup:native` in the README)');
      }
      detail = ` via ${pkg}`;
    }
    detail += ' (requested)';
  } else {
    const pkg = await tryNative();
    name = pkg !== null ? 'tensorflow' : 'wasm';
    detail = pkg !== null ? ` via ${pkg}` : ' (native tfjs-node not installed)';
  }
  const ok = await tf.setBackend(name);
  if (!ok) throw new Error(`tfjs could not initialise backend "${name}"`);
  await tf.ready();
  chosen = name;
  if (opts.verbose) process.stderr.write(`[toolrl] tfjs backend: ${name}${detail}\n`);
  return name;
}

/** The backend chosen by initBackend, or throws if it has not run yet. */
export function activeBackend(): BackendName {
  if (chosen === null) throw new Error('initBackend() has not been called');
  return chosen;
}
