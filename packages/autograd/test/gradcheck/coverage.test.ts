import * as autograd from '@surf/autograd';
import { gradcheckSuite } from '@surf/autograd';
import { gradcheckCoverage } from '../../src/gradcheck/coverage';

// Every differentiable op of the API (Tensor's methods and getters, the package's functions)
// has a gradient-check case; the list of what is not differentiable stays true. The API is
// read from the code, so a new op fails here until it gets a case (or a stated reason).
test('the gradcheck suite covers every differentiable op of the API', () => {
  const r = gradcheckCoverage(autograd as unknown as Record<string, unknown>, gradcheckSuite());
  expect({ missingCases: r.missing, staleExclusions: r.stale, differentiableButExcluded: r.contradicted }).toEqual({
    missingCases: [],
    staleExclusions: [],
    differentiableButExcluded: [],
  });
});
