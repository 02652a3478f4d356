/** Unwraps the `[error, result]` pairs of a MULTI or pipeline, failing on the first error. */
export function execResults(replies: [Error | null, unknown][] | null): unknown[] {
  if (replies === null) throw new Error('transaction aborted');
  return replies.map(([error, result]) => {
    if (error) throw error;
    return result;
  });
}
