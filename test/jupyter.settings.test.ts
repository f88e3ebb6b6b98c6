// The project's JupyterLab defaults (jupyter/lab/overrides.json, installed by scripts/setup-jupyter.sh):
// JupyterLab must not ask on first start whether to fetch Jupyter news, and every key must exist in the
// installed JupyterLab's schemas (a misspelt key is silently ignored by JupyterLab).
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import { spawnSync } from 'child_process';

const ROOT = path.resolve(__dirname, '..');
const overrides = JSON.parse(fs.readFileSync(path.join(ROOT, 'jupyter', 'lab', 'overrides.json'), 'utf8')) as
  Record<string, Record<string, unknown>>;

test('overrides.json turns the news prompt and the update check off', () => {
  const n = overrides['@jupyterlab/apputils-extension:notification'];
  assert.equal(n?.fetchNews, 'false');
  assert.equal(n?.checkForUpdates, false);
});

const schemas = path.join(ROOT, '.venv', 'share', 'jupyter', 'lab', 'schemas');
let setupError: string | null = null;
before(() => {
  // the venv on demand, as for the notebooks (~25 s the first time); locked, so the two files may ask at once
  const r = spawnSync('bash', [path.join(ROOT, 'scripts', 'setup-jupyter.sh')], { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) setupError = `scripts/setup-jupyter.sh failed (exit ${r.status}):\n${r.stdout}\n${r.stderr}`;
});

test('every overridden setting exists in the installed JupyterLab schemas', () => {
  assert.equal(setupError, null, setupError ?? '');
  for (const [plugin, values] of Object.entries(overrides)) {
    // "@jupyterlab/apputils-extension:notification" -> schemas/@jupyterlab/apputils-extension/notification.json
    const [pkg, name] = plugin.split(':');
    const file = path.join(schemas, pkg, `${name}.json`);
    assert.ok(fs.existsSync(file), `no schema ${file} for ${plugin}`);
    const props = (JSON.parse(fs.readFileSync(file, 'utf8')) as { properties: Record<string, { type?: string; oneOf?: { const: unknown }[] }> }).properties;
    for (const [key, value] of Object.entries(values)) {
      const prop = props[key];
      assert.ok(prop, `${plugin} has no setting "${key}"`);
      if (prop.oneOf) assert.ok(prop.oneOf.some((o) => o.const === value), `${plugin}.${key}: ${JSON.stringify(value)} is not one of the allowed values`);
      else if (prop.type) assert.equal(typeof value, prop.type === 'integer' ? 'number' : prop.type, `${plugin}.${key}`);
    }
  }
});

test('setup-jupyter.sh installs overrides.json into the app settings folder', () => {
  assert.equal(setupError, null, setupError ?? '');
  // With the venv in place the script only compares files (well under a second).
  const r = spawnSync('bash', [path.join(ROOT, 'scripts', 'setup-jupyter.sh')], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(r.status, 0, `${r.stdout}${r.stderr}`);
  const installed = path.join(ROOT, '.venv', 'share', 'jupyter', 'lab', 'settings', 'overrides.json');
  assert.ok(fs.existsSync(installed), `${installed} missing: run scripts/setup-jupyter.sh`);
  assert.deepEqual(JSON.parse(fs.readFileSync(installed, 'utf8')), overrides);
});
