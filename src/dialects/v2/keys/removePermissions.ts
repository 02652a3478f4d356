import { removePermissions } from '../../../operations/keys/removePermissions';
import { linkRoute } from './links';

export const v2RemovePermissions = linkRoute(
  'permissions',
  'remove',
  'keys.removePermissions',
  removePermissions,
);
