export { philox4x32 } from './philox';
export {
  RANDOM_STATE_WORDS,
  TWO_POW_M24,
  checkRandomParams,
  fillRandom,
  wordsToValue,
  type RandomDist,
  type RandomParams,
} from './draw';
export { randomDraw } from './ndarray';
