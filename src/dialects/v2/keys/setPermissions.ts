import { setPermissions } from '../../../operations/keys/setPermissions';
import { linkRoute } from './links';

export const v2SetPermissions = linkRoute(
  'permissions',
  'set',
  'keys.setPermissions',
  setPermissions,
);
