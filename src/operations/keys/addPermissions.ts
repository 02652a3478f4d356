import { linkOperation } from './linkOperation';

export const addPermissions = linkOperation('permissions', 'add');
