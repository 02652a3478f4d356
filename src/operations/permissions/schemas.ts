import { object } from '../schemas';

/**
 * Unkey v1's rules for a permission's name and slug (its `identifier`): 3–256 characters that
 * are safe in a URL and in a permission query.
 */
export const permissionName = {
  type: 'string',
  minLength: 3,
  maxLength: 256,
  pattern: '^[a-zA-Z0-9_.:-]*$',
} as const;

/** A role's name is a label for people (Unkey v1's `name`): 3–256 characters of any kind. */
export const roleName = { type: 'string', minLength: 3, maxLength: 256 } as const;

/**
 * A name Unkey v1's createKey takes (and creates when missing): any 1–512 characters, for a
 * permission as for a role. What a permission query cannot spell it cannot ask for, as in Unkey.
 */
export const keyLinkName = { type: 'string', minLength: 1, maxLength: 512 } as const;

/** Which rule a name to create follows: the catalogue's own, or createKey's looser one. */
export type NameRule = 'catalogue' | 'keyLink';

const PERMISSION_NAME = new RegExp(permissionName.pattern);

/**
 * What is wrong with a name given for a permission or role to create, by the schemas above
 * (calls that may create one from a name, keys.addPermissions with `create`, take any name to
 * look up): undefined when nothing is.
 */
export function newNameProblem(
  kind: 'permissions' | 'roles',
  name: string,
  names: NameRule = 'catalogue',
): string | undefined {
  const rule =
    names === 'keyLink' ? keyLinkName : kind === 'permissions' ? permissionName : roleName;
  if (name.length < rule.minLength || name.length > rule.maxLength) {
    return `must be ${rule.minLength}–${rule.maxLength} characters`;
  }
  if (names === 'catalogue' && kind === 'permissions' && !PERMISSION_NAME.test(name)) {
    return 'may hold only letters, digits and _ . : -';
  }
  return undefined;
}

/** 3–256 characters, or empty, as Unkey v1 takes it. */
export const description = {
  anyOf: [
    { type: 'string', minLength: 3, maxLength: 256 },
    { type: 'string', maxLength: 0 },
  ],
} as const;

const text = { type: 'string' } as const;
const integer = { type: 'integer' } as const;

export const permissionOutput = object(
  { id: text, name: text, slug: text, description: text, createdAt: integer },
  ['id', 'name', 'slug'],
);

export const roleOutput = object(
  { id: text, name: text, description: text, permissions: { type: 'array', items: text } },
  ['id', 'name'],
);
