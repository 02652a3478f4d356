import { linkOperation } from './linkOperation';

export const removePermissions = linkOperation('permissions', 'remove');
