/**
 * Picks the TensorFlow.js backend at run time.
 *
 * Order: `TOOLRL_BACKEND` if set (tensorflow | wasm | cpu); else the native `tensorflow` backend when
 * `@tensorflow/tfjs-node-gpu`, `@tensorflow/tfjs-node`, or the project-local install made by
 * `npm run setup:native` (`.native/`, or `TOOLRL_NATIVE_DIR`) loads and registers it; else `wasm`. The pure-JS
 * `cpu` backend is ~100x slower than wasm for our model, so it runs only when asked for (tiny tests).
 *
 * Note: the npm override that lets danfojs-node install aliases a package named `@tensorflow/tfjs-node` to
 * plain tfjs, so "the module loads" is not enough: we check that a `tensorflow` backend got registered in
 * the tfjs-core instance this file uses (setup-native.sh symlinks `.native`'s tfjs packages to the project's).
 */
import * as fs from 'fs';
import * as path from 'path';
import * as tf from '@tensorflow/tfjs';
import '@tensorflow/tfjs-backend-wasm';

export type BackendName = 'tensorflow' | 'wasm' | 'cpu';
const KNOWN: BackendName[] = ['tensorflow', 'wasm', 'cpu'];

let chosen: BackendName | null = null;

/** Folder of the project-local native install (`npm run setup:native`). */
export function nativeInstallDir(): string {
  const env = (process.env.TOOLRL_NATIVE_DIR ?? '').trim();
  return env !== '' ? path.resolve(env) : path.resolve(__dirname, '..', '.native');
}

/** Entry files of the tfjs-node packages installed under nativeInstallDir() (GPU first); [] when none. */
export function nativeInstallEntries(): string[] {
  const out: string[] = [];
  for (const pkg of ['tfjs-node-gpu', 'tfjs-node']) {
    const dir = path.join(nativeInstallDir(), 'node_modules', '@tensorflow', pkg);
    try {
      const main = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).main ?? 'index.js';
      let file = path.join(dir, main);
      if (!fs.existsSync(file) && fs.existsSync(file + '.js')) file += '.js';
      if (fs.existsSync(file)) out.push(file);
    } catch {
      // not installed there
    }
  }
  return out;
}

let nativeErrors: string[] = [];

async function tryNative(): Promise<string | null> {
  if (tf.findBackendFactory('tensorflow') != null) return 'an already loaded tfjs-node';
  nativeErrors = [];
  // TensorFlow's C++ start-up chatter (CPU feature notes) goes to stderr unless told otherwise.
  if (process.env.TF_CPP_MIN_LOG_LEVEL === undefined) process.env.TF_CPP_MIN_LOG_LEVEL = '2';
  const candidates: Array<[string, string]> = [
    ['@tensorflow/tfjs-node-gpu', '@tensorflow/tfjs-node-gpu'],
    ['@tensorflow/tfjs-node', '@tensorflow/tfjs-node'],
    ...nativeInstallEntries().map((f): [string, string] => [f, path.relative(process.cwd(), f) || f]),
  ];
  for (const [spec, label] of candidates) {
    try {
      const name = spec; // a variable keeps TypeScript from requiring the (optional) package's types
      await import(name);
      if (tf.findBackendFactory('tensorflow') != null) return label;
      if (path.isAbsolute(spec)) {
        nativeErrors.push(`${label} loaded but registered no "tensorflow" backend in this process's tfjs-core ` +
          '(its @tensorflow/tfjs* must be symlinks to the project\'s: rerun `npm run setup:native`)');
      }
    } catch (e) {
      // not installed or its native library failed to load: fall through (remember why for the local install)
      if (path.isAbsolute(spec)) nativeErrors.push(`${label}: ${(e as Error).message.split('\n')[0]}`);
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
        throw new Error('backend "tensorflow" requested but neither @tensorflow/tfjs-node-gpu, @tensorflow/tfjs-node ' +
          `nor a local install in ${nativeInstallDir()} registers it here; run \`npm run setup:native\` ` +
          '(or use TOOLRL_BACKEND=wasm)' + (nativeErrors.length ? ` [${nativeErrors.join('; ')}]` : ''));
      }
      detail = ` via ${pkg}`;
    }
    detail += ' (requested)';
  } else {
    const pkg = await tryNative();
    name = pkg !== null ? 'tensorflow' : 'wasm';
    detail = pkg !== null ? ` via ${pkg}`
      : nativeErrors.length ? ` (native backend failed to load: ${nativeErrors.join('; ')})`
      : ' (native tfjs-node not installed; `npm run setup:native` adds it)';
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
