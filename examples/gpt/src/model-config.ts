import * as surf from '@surf/nn';
import { GptConfig } from './model';

/**
 * A model file's config is untrusted: it says how much to build. Checked before anything is
 * built, each value must be in range and agree with the tensors the file holds (their shapes and
 * the count of layers), so a 200-byte file cannot make the loader build a 20,000-layer model
 * before the missing-keys error. What is built is then bounded by what the file holds.
 */
const KEYS: readonly (keyof GptConfig)[] = ['vocabSize', 'blockSize', 'nEmbd', 'nHead', 'nLayer', 'dropout'];

function bad(msg: string): never {
  throw new surf.ValueError(`model file: ${msg}; expected a file saved by \`npm run gpt\``);
}

/** Parses the config text and checks it against the file's tensors (from surf.loadHeader). */
export function readGptConfig(text: string, tensors: Map<string, { readonly shape: readonly number[] }>): GptConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    bad(`the config is not JSON (${(e as Error).message})`);
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) bad('the config is not a JSON object');
  const given = raw as Record<string, unknown>;
  for (const k of Object.keys(given))
    if (!KEYS.includes(k as keyof GptConfig)) bad(`the config has an unknown key '${k}'`);
  const int = (k: keyof GptConfig): number => {
    const v = Object.prototype.hasOwnProperty.call(given, k) ? given[k] : undefined;
    if (!Number.isSafeInteger(v) || (v as number) < 1)
      bad(`config.${k} is ${JSON.stringify(v)}; must be an integer >= 1`);
    return v as number;
  };
  const c: GptConfig = {
    vocabSize: int('vocabSize'),
    blockSize: int('blockSize'),
    nEmbd: int('nEmbd'),
    nHead: int('nHead'),
    nLayer: int('nLayer'),
    dropout: given.dropout as number,
  };
  if (typeof c.dropout !== 'number' || !(c.dropout >= 0 && c.dropout < 1))
    bad(`config.dropout is ${JSON.stringify(c.dropout)}; must be a number in [0, 1)`);
  if (c.nEmbd % c.nHead !== 0) bad(`config.nEmbd ${c.nEmbd} is not a multiple of config.nHead ${c.nHead}`);
  const shapeOf = (name: string) => tensors.get(name)?.shape.join(',') ?? 'missing';
  const expect = (name: string, shape: number[], keys: string) => {
    if (shapeOf(name) !== shape.join(','))
      bad(
        `config ${keys} says '${name}' is [${shape.join(', ')}]; the file has ${tensors.has(name) ? `[${shapeOf(name)}]` : 'no such tensor'}`,
      );
  };
  expect('tokEmb.weight', [c.vocabSize, c.nEmbd], '{ vocabSize, nEmbd }');
  expect('posEmb.weight', [c.blockSize, c.nEmbd], '{ blockSize, nEmbd }');
  const layers = new Set<string>();
  for (const name of tensors.keys()) {
    const m = /^blocks\.([0-9]+)\./.exec(name);
    if (m) layers.add(m[1]);
  }
  for (let i = 0; i < c.nLayer; i++) {
    if (!layers.has(String(i)))
      bad(`config.nLayer is ${c.nLayer}; the file holds ${layers.size} layers (no blocks.${i})`);
  }
  if (layers.size !== c.nLayer) bad(`config.nLayer is ${c.nLayer}; the file holds ${layers.size} layers`);
  return c;
}
