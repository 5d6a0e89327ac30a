import * as surf from '@surf/nn';
import { Gpt, GptConfig } from './model';

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
  const meta = surf.loadMetadata(bytes) ?? {};
  if (!meta.config || !meta.vocab)
    throw new surf.ValueError('model file: no config/vocab metadata; expected a file saved by `npm run gpt`');
  const model = new Gpt(JSON.parse(meta.config) as GptConfig);
  const dict = surf.load(bytes);
  try {
    model.loadStateDict(dict);
  } finally {
    Object.values(dict).forEach((t) => t.dispose());
  }
  return { model, vocab: JSON.parse(meta.vocab) as string[], meta };
}
