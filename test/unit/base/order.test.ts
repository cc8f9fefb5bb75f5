import { compareCodeUnits } from '../../../src/base/order';

test('strings order by code unit, whatever the locale', () => {
  const names = ['b', 'B', 'a-2', 'a_1', 'a10', 'a9', 'Z', ''];
  // localeCompare would put 'a_1' before 'a-2', and 'B' beside 'b'.
  expect([...names].sort(compareCodeUnits)).toEqual(['', 'B', 'Z', 'a-2', 'a10', 'a9', 'a_1', 'b']);
  expect(compareCodeUnits('x', 'x')).toBe(0);
});
