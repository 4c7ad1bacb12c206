// The presets by name: the one place that knows them all. plan.ts validates a name against this table and
// a hasher takes its definition from it once.
import type { Preset } from '../options.js';
import { defaultPreset, specV1Preset } from './default.js';
import { javaPreset } from './java.js';
import type { PresetDefinition } from './preset.js';
import { pythonPreset } from './python.js';

export const PRESETS: Readonly<Record<Preset, PresetDefinition>> = {
  default: defaultPreset,
  'simhash-wasm/2': defaultPreset,
  'simhash-wasm/1': specV1Preset,
  java: javaPreset,
  'python-simhash': pythonPreset,
};
