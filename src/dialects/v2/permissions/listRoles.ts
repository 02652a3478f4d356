import { listingInput, type ListingInput } from '../../../operations/listing';
import { listRoles, type RolesPage } from '../../../operations/permissions/listRoles';
import { defineV2Route } from '../route';
import { listedBody, listingOf, roleOutput, v2Role } from './shapes';

export const v2ListRoles = defineV2Route({
  name: 'permissions.listRoles',
  operation: listRoles,
  input: listingInput,
  output: { type: 'array', items: roleOutput },
  toInput: (body: ListingInput) => listingOf(body),
  toBody: (page: RolesPage) => listedBody(page.roles.map(v2Role), page.cursor),
});
