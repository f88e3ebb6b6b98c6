// Every field of every config is declared once (lib/util/fields.ts) with its range. This walks them all: the default
// lies inside, a value just below and just above (and a wrong type) are refused naming the key and the range, both
// where `--set` applies them to an experiment that has the field and, for one field per config, on the command line
// with exit 2 before anything starts.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { CONFIGS, applyOverrides, pipelineOverrides } from '../lib/experiments/run/overrides';
import { listExperiments } from '../lib/experiments/registry/configs';
import { getPreset } from '../lib/experiments/registry/presets';
import { Field, FieldError, rangeText } from '../lib/util/fields';

type Value = string | number | boolean;

/** Values outside a field's declaration: just below, just above, and one of the wrong kind. */
function outside(f: Field<unknown>): Value[] {
  if (f.kind === 'boolean') return ['yes', 1];
  const below = f.open === 'min' || f.open === 'both' ? f.min! : f.min! -
    (f.kind === 'integer' ? 1 : Math.max(1e-3, Math.abs(f.min!)));
  const above = f.open === 'max' || f.open === 'both' ? f.max! : f.max! +
    (f.kind === 'integer' ? 1 : Math.max(1e-3, Math.abs(f.max!)));
  const out: Value[] = [below, above, 'x'];
  // an integer field refuses a fraction inside its range
  if (f.kind === 'integer' && f.max! - f.min! >= 1) out.push(f.min! + 0.5);
  return out;
}

/** The first registry experiment whose stages reach `prefix.key` (every declared field is reachable by some). */
function reaching(prefix: string, key: string) {
  const preset = getPreset('smoke');
  for (const spec of listExperiments()) {
    try {
      applyOverrides(spec.stages(preset), { [`${prefix}.${key}`]: fieldDefault(prefix, key) as Value });
      return spec;
    } catch { /* this experiment has no such field */ }
  }
  return undefined;
}

const fieldDefault = (prefix: string, key: string) => {
  const d = CONFIGS.find((c) => c.prefix === prefix)!.fields[key].default;
  return d === null ? 'null' : d;
};

const message = (prefix: string, key: string, f: Field<unknown>) => `${prefix}.${key} must be ${rangeText(f)}`;

test('every declared default lies inside its own range', () => {
  for (const decl of CONFIGS) {
    for (const [key, f] of Object.entries(decl.fields)) {
      assert.ok(f.schema.safeParse(f.default).success,
        `${decl.prefix}.${key}: default ${f.default} outside ${rangeText(f)}`);
      if (f.kind !== 'boolean') assert.ok(f.min! < f.max!, `${decl.prefix}.${key}: empty range`);
    }
    decl.check(decl.defaults); // and the cross-field rule holds for the defaults
  }
});

test('every field of every config refuses a value below and above its range, naming the key and the range', () => {
  const preset = getPreset('smoke');
  let checked = 0;
  for (const decl of CONFIGS) {
    for (const [key, f] of Object.entries(decl.fields)) {
      const want = message(decl.prefix, key, f);
      for (const v of outside(f)) {
        const setting = { [`${decl.prefix}.${key}`]: v };
        const what = `--set ${decl.prefix}.${key}=${v}`;
        if (decl.prefix === 'pipeline') {
          assert.throws(() => pipelineOverrides(undefined, setting),
            (e: Error) => e instanceof FieldError && e.message.startsWith(want), what);
        } else {
          const spec = reaching(decl.prefix, key);
          assert.ok(spec, `${decl.prefix}.${key}: no experiment of the registry has this field`);
          assert.throws(() => applyOverrides(spec.stages(preset), setting),
            (e: Error) => e instanceof FieldError && e.message.startsWith(want), `${what} on ${spec.name}`);
        }
        checked++;
      }
    }
  }
  assert.ok(checked > 150, `only ${checked} values walked`);
});

test('on the command line an out-of-range value exits 2 with one line naming the key and the range (one field per ' +
  'config)', () => {
  const out = path.join(os.tmpdir(), `toolrl-bounds-${process.pid}`);
  CONFIGS.forEach((decl, i) => {
    const fields = Object.entries(decl.fields);
    const [key, f] = fields.find(([, x]) => x.kind !== 'boolean') ?? fields[0];
    const v = outside(f)[i % 2]; // below for one config, above for the next (a flag: a word, then a number)
    const spec = decl.prefix === 'pipeline' ? listExperiments()[0] : reaching(decl.prefix, key)!;
    const r = spawnSync(process.execPath, ['bin/toolrl.js', 'run', '--config', spec.name, '--preset', 'smoke',
      '--set', `${decl.prefix}.${key}=${v}`, '--out', out], { encoding: 'utf8' });
    const what = `run --config ${spec.name} --set ${decl.prefix}.${key}=${v}`;
    assert.equal(r.status, 2, `${what}: ${r.stderr}`);
    assert.equal(r.stderr.split('\n').filter(Boolean).length, 1, `${what}: ${r.stderr}`);
    const line = r.stderr.trim();
    assert.ok(line.startsWith('toolrl run: error: ') && line.includes(message(decl.prefix, key, f)),
      `${what}: ${line}`);
    assert.ok(!fs.existsSync(out), `${what}: created ${out}`);
  });
});
