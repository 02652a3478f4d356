import {
  INVALID_INPUT,
  KEY_NOT_FOUND_AUTH,
  MALFORMED,
  type ConformanceCase,
  type Json,
} from '../types';

/**
 * Unkey v2's answers to an Authorization header it cannot use, as its routes' `401_test.go` files
 * assert them: none or an empty one is 400 (`invalid_input`), one without `Bearer ` or with
 * nothing after it is 400 (`authentication/malformed`), an unknown key is 401
 * (`authentication/key_not_found`). keyward's v2 answers them the same (its dialect's `refine`).
 */
export type HeaderCase = [testName: string, header: string | null, unkeyStatus: 400 | 401];

export const MISSING: HeaderCase = ['missing authorization header', null, 400];
export const EMPTY: HeaderCase = ['empty authorization header', '', 400];
export const NO_BEARER: HeaderCase = [
  'malformed authorization header - no Bearer prefix',
  'invalid_token_without_bearer',
  400,
];
export const BEARER_ONLY: HeaderCase = [
  'malformed authorization header - Bearer only',
  'Bearer',
  400,
];
export const UNKNOWN: HeaderCase = [
  'nonexistent root key',
  'Bearer key_3ZGp4bGXXRq6JbtKLVrCmZrM',
  401,
];

/**
 * One case per header. `checksType`: the Unkey test compares `error.type` too (its identities
 * tests do).
 */
export function headerCases(
  from: string,
  route: string,
  body: Json,
  headers: HeaderCase[],
  checksType = false,
): ConformanceCase[] {
  return headers.map(([testName, header, status]) => {
    const type =
      status === 401
        ? KEY_NOT_FOUND_AUTH
        : header === null || header === ''
          ? INVALID_INPUT
          : MALFORMED;
    return {
      from: `${from}/${testName}`,
      route,
      caller: { header },
      body,
      expect: checksType ? { status, type } : { status },
    };
  });
}

export const MISSING_HEADER: HeaderCase = ['missing authorization header', null, 400];
export const INVALID_TOKEN: HeaderCase = [
  'invalid bearer token',
  'Bearer invalid_token_that_does_not_exist',
  401,
];
export const MALFORMED_HEADER: HeaderCase = [
  'malformed authorization header',
  'malformed_header_without_bearer_prefix',
  400,
];
export const EMPTY_BEARER: HeaderCase = ['empty bearer token', 'Bearer ', 400];

/** A header case under another test name (each route's tests word them their own way). */
export const named = (testName: string, [, header, status]: HeaderCase): HeaderCase => [
  testName,
  header,
  status,
];
