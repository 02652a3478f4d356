import { linkOperation } from './linkOperation';

export const setPermissions = linkOperation('permissions', 'set');
