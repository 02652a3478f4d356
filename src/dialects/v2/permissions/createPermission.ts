import { createPermission } from '../../../operations/permissions/createPermission';
import { description } from '../../../operations/permissions/schemas';
import { object } from '../../../operations/schemas';
import { defineV2Route, widen } from '../route';
import { V2_SLUG } from './shapes';

interface V2CreatePermissionBody {
  name: string;
  slug: string;
  description?: string;
}

export const v2CreatePermission = defineV2Route({
  name: 'permissions.createPermission',
  operation: createPermission,
  // v2's name is free text of 1–512 characters, kept in keyward's slug; its slug, keyward's name,
  // may be 1 character long and hold `*` (a literal in queries). v1 keeps its identifier rules.
  coreInput: widen(createPermission.input, {
    name: { minLength: 1, pattern: V2_SLUG.pattern },
    slug: { minLength: 1, maxLength: 512, pattern: undefined },
  }),
  input: object(
    { name: { type: 'string', minLength: 1, maxLength: 512 }, slug: V2_SLUG, description },
    ['name', 'slug'],
  ),
  output: object({ permissionId: { type: 'string' } }, ['permissionId']),
  toInput(body: V2CreatePermissionBody) {
    return {
      name: body.slug,
      slug: body.name,
      ...(body.description !== undefined ? { description: body.description } : {}),
    };
  },
  toBody: (created) => ({ data: { permissionId: created.permissionId } }),
});
