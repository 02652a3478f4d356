import { linkOperation } from './linkOperation';

export const setRoles = linkOperation('roles', 'set');
