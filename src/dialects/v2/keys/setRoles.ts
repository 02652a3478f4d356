import { setRoles } from '../../../operations/keys/setRoles';
import { linkRoute } from './links';

export const v2SetRoles = linkRoute('roles', 'set', 'keys.setRoles', setRoles);
