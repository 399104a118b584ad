import { isWellFormedQuery } from './edge-hooks';
import { RouteTable } from './route-table';

describe('RouteTable', () => {
  it('lists the methods of every pattern matching a concrete path', () => {
    const table = new RouteTable();
    table.add(['GET', 'POST'], '/v1/keys');
    table.add(['GET', 'PATCH', 'DELETE'], '/v1/keys/:id');
    table.add('GET', '/dashboard/api/*');
    expect(table.allowed('/v1/keys')).toEqual(['GET', 'POST']);
    expect(table.allowed('/v1/keys/key_1')).toEqual(['DELETE', 'GET', 'PATCH']);
    expect(table.allowed('/v1/keys/key_1/extra')).toEqual([]);
    expect(table.allowed('/dashboard/api/me/x')).toEqual(['GET']);
    expect(table.allowed('/v1/nothing')).toEqual([]);
  });
});

describe('isWellFormedQuery', () => {
  it.each([['a=1&b=2', true], ['q=caf%C3%A9', true], ['a=%ZZ', false], ['a=%', false], ['a=%FF', false]])('%s -> %s', (query, ok) => {
    expect(isWellFormedQuery(query)).toBe(ok);
  });
});
