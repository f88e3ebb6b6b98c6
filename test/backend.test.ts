import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import * as tf from '@tensorflow/tfjs';
import { activeBackend, initBackend, nativeInstallEntries } from '../lib/backend';

/** A tfjs-node whose addon file exists: the project-local `.native/` install, or a real package in node_modules. */
function nativeInstalled(): boolean {
  for (const entry of nativeInstallEntries()) {
    const pkgDir = path.resolve(path.dirname(entry), '..');
    const lib = path.join(pkgDir, 'lib');
    if (fs.existsSync(lib) && fs.readdirSync(lib).some((d) => fs.existsSync(path.join(lib, d, 'tfjs_binding.node')))) {
      return true;
    }
  }
  for (const pkg of ['tfjs-node', 'tfjs-node-gpu']) {
    // node_modules/@tensorflow/tfjs-node is plain tfjs under the danfojs override; only a real one counts
    const pj = path.resolve(__dirname, '..', 'node_modules', '@tensorflow', pkg, 'package.json');
    if (fs.existsSync(pj) && JSON.parse(fs.readFileSync(pj, 'utf8')).name === `@tensorflow/${pkg}`) return true;
  }
  return false;
}

function matMulWorks(): void {
  const c = tf.tidy(() => tf.matMul(tf.tensor2d([[1, 2], [3, 4]]), tf.tensor2d([[5, 6], [7, 8]])));
  assert.deepEqual(Array.from(c.dataSync()), [19, 22, 43, 50]);
  c.dispose();
}

describe('initBackend', () => {
  it('initialises wasm when requested', async () => {
    assert.equal(await initBackend({ backend: 'wasm' }), 'wasm');
    assert.equal(tf.getBackend(), 'wasm');
    assert.equal(activeBackend(), 'wasm');
    matMulWorks();
  });

  it('initialises cpu when requested', async () => {
    assert.equal(await initBackend({ backend: 'cpu' }), 'cpu');
    assert.equal(tf.getBackend(), 'cpu');
    matMulWorks();
  });

  it('reads TOOLRL_BACKEND when no backend is passed', async () => {
    const saved = process.env.TOOLRL_BACKEND;
    process.env.TOOLRL_BACKEND = 'wasm';
    try {
      assert.equal(await initBackend(), 'wasm');
    } finally {
      if (saved === undefined) delete process.env.TOOLRL_BACKEND; else process.env.TOOLRL_BACKEND = saved;
    }
  });

  it('rejects an unknown backend, naming it', async () => {
    await assert.rejects(initBackend({ backend: 'webgpu-nope' }), /unknown backend "webgpu-nope"/);
    const saved = process.env.TOOLRL_BACKEND;
    process.env.TOOLRL_BACKEND = 'tpu';
    try {
      await assert.rejects(initBackend(), /TOOLRL_BACKEND.*"tpu"/);
    } finally {
      if (saved === undefined) delete process.env.TOOLRL_BACKEND; else process.env.TOOLRL_BACKEND = saved;
    }
  });

  const native = nativeInstalled();

  it('fails clearly when "tensorflow" is requested without a native install', { skip: native && 'native backend installed' }, async () => {
    await assert.rejects(initBackend({ backend: 'tensorflow' }), /backend "tensorflow" requested.*npm run setup:native/);
  });

  it('runs the native "tensorflow" backend when it is installed', { skip: !native && 'no native backend (npm run setup:native)' }, async () => {
    assert.equal(await initBackend({ backend: 'tensorflow' }), 'tensorflow');
    assert.equal(tf.getBackend(), 'tensorflow');
    matMulWorks();
  });
});
