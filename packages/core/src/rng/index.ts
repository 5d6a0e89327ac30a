export { philox4x32 } from './philox';
export {
  RANDOM_STATE_WORDS,
  TWO_POW_M24,
  checkRandomParams,
  countersFor,
  normalOf,
  fillRandom,
  type RandomDist,
  type RandomParams,
} from './draw';
export { randomDraw } from './ndarray';
export { COS_P, LN2_HI, LN2_LO, LOG_P, PIO2, SIN_P, SQRTHF, cosTurnF32, logF32, sinTurnF32 } from './normal';
