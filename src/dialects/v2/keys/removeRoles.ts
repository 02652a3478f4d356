import { removeRoles } from '../../../operations/keys/removeRoles';
import { linkRoute } from './links';

export const v2RemoveRoles = linkRoute('roles', 'remove', 'keys.removeRoles', removeRoles);
