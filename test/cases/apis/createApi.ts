import { created } from '../../support/wireScenario';
import { defineCases } from '../types';

export const cases = defineCases({
  operation: 'apis.createApi',
  authz: [
    {
      input: () => ({ name: 'by-matrix' }),
      effect: async (_, response) => {
        expect(response.body).toEqual({ apiId: expect.stringMatching(/^api_/), name: 'by-matrix' });
      },
    },
  ],
  hostile: { base: () => [['name', '"fuzz-created"']] },
  wire: {
    async aAndB(w) {
      const { c } = w;
      const apiA = (
        await created(c.post('createApi A', 'apis.createApi', { name: 'corpus-a' }), 'apiId', 'A')
      ).value;
      const apiB = (
        await created(c.post('createApi B', 'apis.createApi', { name: 'corpus-b' }), 'apiId', 'B')
      ).value;
      w.make('apiA', apiA);
      w.make('apiB', apiB);
    },
    async variants(w) {
      const { c, context } = w;
      await c.post(
        'createApi: lower-case bearer scheme',
        'apis.createApi',
        { name: 'scheme' },
        { auth: { header: `bearer ${context.rootKey}` } },
      );
      await c.post(
        'createApi: content type in capitals',
        'apis.createApi',
        { name: 'caps' },
        {
          contentType: 'APPLICATION/JSON; charset=UTF-8',
        },
      );
      await c.post('createApi: unknown fields are ignored', 'apis.createApi', {
        name: 'extra',
        workspaceId: 'ws_other',
        id: 'api_mine',
      });
      await c.post('createApi: missing name', 'apis.createApi', {});
      await c.post('createApi: empty name', 'apis.createApi', { name: '' });
      await c.post('createApi: 257-character name', 'apis.createApi', { name: 'n'.repeat(257) });
      await c.post('createApi: name is a number', 'apis.createApi', { name: 123 });
      await c.post('createApi: name is an array', 'apis.createApi', { name: ['x'] });
    },
  },
});
