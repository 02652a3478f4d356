import { listRoles, type RolesPage } from '../../../operations/permissions/listRoles';
import { defineV2Route } from '../route';
import { listedBody, listing, listingOf, roleOutput, v2Role, type ListingBody } from './shapes';

export const v2ListRoles = defineV2Route({
  name: 'permissions.listRoles',
  operation: listRoles,
  input: listing,
  output: { type: 'array', items: roleOutput },
  toInput: (body: ListingBody) => listingOf(body),
  toBody: (page: RolesPage) => listedBody(page.roles.map(v2Role), page.cursor),
});
