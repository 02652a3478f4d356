import { authzMatrix } from '../support/authzMatrix';

// Who may do what: the second half of the principals (test/support/authzMatrix.ts).
authzMatrix(1);
