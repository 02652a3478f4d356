import { createKeys } from '../../../operations/migrations/createKeys';
import { object } from '../../../operations/schemas';
import { defineV2Route, open } from '../route';
import { refuse } from '../shapes';

/**
 * v2 imports hashes made by a migration Unkey configured for the workspace (`migrationId`), to be
 * rehashed when verifyKey names it. keyward has no migrations: it imports keys by their SHA-256,
 * all or none, with /v1/migrations.createKeys.
 */
export const v2MigrateKeys = defineV2Route({
  name: 'keys.migrateKeys',
  operation: createKeys,
  input: object(
    {
      migrationId: { type: 'string', minLength: 3, maxLength: 255 },
      apiId: { type: 'string', minLength: 3, maxLength: 255 },
      keys: {
        type: 'array',
        minItems: 1,
        // keyward reads none of a key's fields (the call is refused), so they pass unchecked.
        items: open(object({ hash: { type: 'string', minLength: 3 } }, ['hash'])),
      },
    },
    ['migrationId', 'apiId', 'keys'],
  ),
  output: { type: 'object' },
  toInput(): never {
    return refuse(
      'migrationId',
      'keyward has no key migrations; import keys by their SHA-256 hash with /v1/migrations.createKeys',
    );
  },
  toBody: () => ({ data: { migrated: [], failed: [] } }),
});
