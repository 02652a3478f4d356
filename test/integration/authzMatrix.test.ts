import { authzMatrix } from '../support/authzMatrix';

// Who may do what: the first half of the principals, and the matrix's other checks.
authzMatrix(0);
