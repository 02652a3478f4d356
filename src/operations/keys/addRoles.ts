import { linkOperation } from './linkOperation';

export const addRoles = linkOperation('roles', 'add');
