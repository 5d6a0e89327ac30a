import * as surf from '@surf/nn';
import { Gpt } from './model';
import { readGptConfig } from './model-config';

/**
 * The model file: the GPT's state dict as safetensors (MultiheadAttention's tensors under
 * PyTorch's names), with the config and the vocabulary in the metadata so --sample needs
 * nothing else.
 */
export async function saveGpt(
  model: Gpt,
  vocab: readonly string[],
  extra: Record<string, string> = {},
): Promise<Uint8Array> {
  return surf.save(model, { config: JSON.stringify(model.config), vocab: JSON.stringify(vocab), ...extra });
}

export function loadGpt(bytes: Uint8Array): { model: Gpt; vocab: string[]; meta: Record<string, string> } {
  // Everything is checked against the header before anything is built or loaded.
  const header = surf.loadHeader(bytes);
  const meta = header.metadata ?? ({} as Record<string, string>);
  if (!meta.config || !meta.vocab)
    throw new surf.ValueError('model file: no config/vocab metadata; expected a file saved by `npm run gpt`');
  const config = readGptConfig(meta.config, header.tensors);
  const vocab = readVocab(meta.vocab, config.vocabSize);
  const model = new Gpt(config);
  const dict = surf.load(bytes);
  try {
    model.loadStateDict(dict);
  } finally {
    Object.values(dict).forEach((t) => t.dispose());
  }
  return { model, vocab, meta };
}

function readVocab(text: string, size: number): string[] {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new surf.ValueError(`model file: the vocab is not JSON (${(e as Error).message})`);
  }
  if (!Array.isArray(v) || v.length !== size || !v.every((s) => typeof s === 'string'))
    throw new surf.ValueError(`model file: the vocab must be ${size} strings (config.vocabSize)`);
  return v as string[];
}
