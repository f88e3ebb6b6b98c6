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
import { quietTfjs } from './util/quiet-tfjs';

export type BackendName = 'tensorflow' | 'wasm' | 'cpu';
const KNOWN: BackendName[] = ['tensorflow', 'wasm', 'cpu'];
quietTfjs();

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
      throw new Error(`TOOLRL_BACKEND / --backend: unknown backend "${requested}" (expected one of ` +
        `${KNOWN.join(', ')})`);
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
  if (name === 'tensorflow') useTwoDimMatMul();
  chosen = name;
  if (opts.verbose) process.stderr.write(`[toolrl] tfjs backend: ${name}${detail}\n`);
  return name;
}

/**
 * tfjs-node runs every matMul as TensorFlow's BatchMatMulV2, which with oneDNN costs ~95 us even for a
 * [32, 64] x [64, 192] product; TensorFlow's plain MatMul op takes ~40 us for it, and stays faster up to a few
 * million multiply-adds, while the large products of training run better as BatchMatMulV2 (measured:
 * [4096, 64] x [64, 1235] 14 vs 18 ms). A KV-cache decode step is a few dozen small products, so on the
 * tensorflow backend small 2-D products go to MatMul and the rest keep the original kernel. Same kernel
 * name, so tfjs's gradients are unchanged.
 */
const TWO_DIM_MATMUL_MAX = 1 << 24; // multiply-adds (M x K x N)

function useTwoDimMatMul(): void {
  const original = tf.getKernel('BatchMatMul', 'tensorflow');
  if (original === undefined || (original as { twoDim?: boolean }).twoDim) return;
  const fallback = original.kernelFunc;
  interface NativeBackend {
    binding: { TF_ATTR_TYPE: number; TF_ATTR_BOOL: number; TF_FLOAT: number };
    executeSingleOutput(op: string, attrs: { name: string; type: number; value: unknown }[],
      inputs: tf.Tensor[]): tf.Tensor;
  }
  const config: tf.KernelConfig & { twoDim: boolean } = {
    kernelName: 'BatchMatMul',
    backendName: 'tensorflow',
    twoDim: true,
    kernelFunc: (args) => {
      const { a, b } = args.inputs as { a: tf.Tensor; b: tf.Tensor };
      const { transposeA, transposeB } = args.attrs as { transposeA: boolean; transposeB: boolean };
      const small = a.rank === 2 && b.rank === 2 && a.size *
        (b.shape[transposeB ? 0 : 1] as number) <= TWO_DIM_MATMUL_MAX;
      if (!small || a.dtype !== 'float32' || b.dtype !== 'float32') return fallback(args);
      const be = args.backend as unknown as NativeBackend;
      return be.executeSingleOutput('MatMul', [
        { name: 'T', type: be.binding.TF_ATTR_TYPE, value: be.binding.TF_FLOAT },
        { name: 'transpose_a', type: be.binding.TF_ATTR_BOOL, value: transposeA },
        { name: 'transpose_b', type: be.binding.TF_ATTR_BOOL, value: transposeB },
      ], [a, b]) as unknown as tf.TensorInfo;
    },
  };
  tf.unregisterKernel('BatchMatMul', 'tensorflow');
  tf.registerKernel(config);
}

/** The backend chosen by initBackend, or throws if it has not run yet. */
export function activeBackend(): BackendName {
  if (chosen === null) throw new Error('initBackend() has not been called');
  return chosen;
}
