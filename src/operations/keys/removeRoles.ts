import { linkOperation } from './linkOperation';

export const removeRoles = linkOperation('roles', 'remove');
