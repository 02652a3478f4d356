import {
  listPermissions,
  type PermissionsPage,
} from '../../../operations/permissions/listPermissions';
import { defineV2Route } from '../route';
import {
  listedBody,
  listing,
  listingOf,
  permissionOutput,
  v2Permission,
  type ListingBody,
} from './shapes';

export const v2ListPermissions = defineV2Route({
  name: 'permissions.listPermissions',
  operation: listPermissions,
  input: listing,
  output: { type: 'array', items: permissionOutput },
  toInput: (body: ListingBody) => listingOf(body),
  toBody: (page: PermissionsPage) => listedBody(page.permissions.map(v2Permission), page.cursor),
});
