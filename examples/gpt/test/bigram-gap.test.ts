import { bigramGap } from '../src/bigram-gap';

// The end-of-run line says above or below by the sign, never "-1.246 below".
test('the gap to the bigram model reads by its sign', () => {
  expect(bigramGap(2.5, 1.988)).toBe('0.512 below the bigram model');
  expect(bigramGap(2.5, 3.746)).toBe('1.246 above the bigram model');
  expect(bigramGap(2.5, 2.5)).toBe('0.000 below the bigram model');
});
