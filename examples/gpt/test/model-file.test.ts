import * as surf from '@surf/nn';
import { CpuBackend } from '@surf/core';
import { Gpt, GptConfig } from '../src/model';
import { loadGpt, saveGpt } from '../src/saved-model';

// A model file's config is checked against the tensors the file holds before anything is built:
// a tiny file whose config asks for 20,000 layers is refused at once instead of building them.

beforeAll(() => {
  surf.setBackend(new CpuBackend());
});

const small: GptConfig = { vocabSize: 5, blockSize: 4, nEmbd: 4, nHead: 2, nLayer: 2, dropout: 0 };
const vocab = ['a', 'b', 'c', 'd', ' '];

/** A file with `model`'s tensors but the given config and vocab text in its metadata. */
async function withConfig(config: unknown, v: unknown = vocab): Promise<Uint8Array> {
  surf.manualSeed(1);
  const m = new Gpt(small);
  return surf.save(m, {
    config: typeof config === 'string' ? config : JSON.stringify(config),
    vocab: JSON.stringify(v),
  });
}

test('a saved model loads back with the same config and outputs', async () => {
  surf.manualSeed(3);
  const m = new Gpt(small);
  const back = loadGpt(await saveGpt(m, vocab));
  expect(back.model.config).toEqual(small);
  expect(back.vocab).toEqual(vocab);
  const ids = surf.tensor(Int32Array.from([0, 1, 2, 3])).reshape([1, 4]);
  expect(Array.from(await back.model.forward(ids).data())).toEqual(Array.from(await m.forward(ids).data()));
});

test('a 200-byte file whose config says nLayer 20000 is refused before anything is built', async () => {
  const config = JSON.stringify({ ...small, nLayer: 20000 });
  const bytes = await surf.save({}, { config, vocab: JSON.stringify(vocab) });
  expect(bytes.length).toBeLessThan(300);
  const t0 = performance.now();
  expect(() => loadGpt(bytes)).toThrow(surf.ValueError);
  expect(() => loadGpt(bytes)).toThrow(/says 'tokEmb.weight' is \[5, 4\]; the file has no such tensor/);
  expect(performance.now() - t0).toBeLessThan(1000);
});

test.each([
  [
    'more layers than the file holds',
    { ...small, nLayer: 3 },
    /config.nLayer is 3; the file holds 2 layers \(no blocks.2\)/,
  ],
  ['fewer layers than the file holds', { ...small, nLayer: 1 }, /config.nLayer is 1; the file holds 2 layers;/],
  ['nLayer 20000', { ...small, nLayer: 20000 }, /config.nLayer is 20000; the file holds 2 layers/],
  [
    'a wider embedding',
    { ...small, nEmbd: 4096, nHead: 2 },
    /says 'tokEmb.weight' is \[5, 4096\]; the file has \[5,4\]/,
  ],
  ['a longer context', { ...small, blockSize: 1e6 }, /posEmb.weight' is \[1000000, 4\]/],
  ['a negative size', { ...small, vocabSize: -5 }, /config.vocabSize is -5; must be an integer >= 1/],
  ['a fractional head count', { ...small, nHead: 1.5 }, /config.nHead is 1.5/],
  ['heads not dividing the width', { ...small, nHead: 3 }, /nEmbd 4 is not a multiple of config.nHead 3/],
  ['dropout 1', { ...small, dropout: 1 }, /config.dropout is 1; must be a number in \[0, 1\)/],
  ['an unknown key', { ...small, nLayers: 2 }, /unknown key 'nLayers'/],
  ['a prototype key', '{"__proto__":{"nLayer":2}}', /unknown key '__proto__'/],
  ['not JSON', '{nLayer: 2', /the config is not JSON/],
  ['null', 'null', /the config is not a JSON object/],
])('a config with %s is a ValueError naming it', async (_name, config, msg) => {
  const bytes = await withConfig(config);
  expect(() => loadGpt(bytes)).toThrow(surf.ValueError);
  expect(() => loadGpt(bytes)).toThrow(msg);
});

test('a vocab that does not match the config is refused', async () => {
  expect(() => loadGpt(Uint8Array.from([]))).toThrow(surf.ValueError);
  const bytes = await withConfig(small, ['a', 'b']);
  expect(() => loadGpt(bytes)).toThrow(/the vocab must be 5 strings/);
});
