/**
 * How the model's validation loss compares with the bigram baseline's, in words: "0.512 below
 * the bigram model" when it does better, "1.246 above ..." when a short run is still worse.
 */
export function bigramGap(bigramLoss: number, modelLoss: number): string {
  const d = bigramLoss - modelLoss;
  return `${Math.abs(d).toFixed(3)} ${d >= 0 ? 'below' : 'above'} the bigram model`;
}
