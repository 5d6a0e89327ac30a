export * from '../../../test-support/gpu';
