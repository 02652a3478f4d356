import { addRoles } from '../../../operations/keys/addRoles';
import { linkRoute } from './links';

export const v2AddRoles = linkRoute('roles', 'add', 'keys.addRoles', addRoles);
