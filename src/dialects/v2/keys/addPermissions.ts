import { addPermissions } from '../../../operations/keys/addPermissions';
import { linkRoute } from './links';

export const v2AddPermissions = linkRoute(
  'permissions',
  'add',
  'keys.addPermissions',
  addPermissions,
);
