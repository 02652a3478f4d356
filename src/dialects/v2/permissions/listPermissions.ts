import { listingInput, type ListingInput } from '../../../operations/listing';
import {
  listPermissions,
  type PermissionsPage,
} from '../../../operations/permissions/listPermissions';
import { defineV2Route } from '../route';
import { listedBody, listingOf, permissionOutput, v2Permission } from './shapes';

export const v2ListPermissions = defineV2Route({
  name: 'permissions.listPermissions',
  operation: listPermissions,
  input: listingInput,
  output: { type: 'array', items: permissionOutput },
  toInput: (body: ListingInput) => listingOf(body),
  toBody: (page: PermissionsPage) => listedBody(page.permissions.map(v2Permission), page.cursor),
});
