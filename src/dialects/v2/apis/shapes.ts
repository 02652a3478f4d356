/** getApi's and deleteApi's `apiId`, as Unkey's spec bounds it. */
export const apiId = {
  type: 'string',
  minLength: 8,
  maxLength: 255,
  pattern: '^[a-zA-Z0-9_]+$',
} as const;
