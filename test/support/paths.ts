/** Where the tests live, for the files they read beside them (fixtures, golden files, support scripts). */
import * as path from 'node:path';

/** The `test/` folder: test files sit in folders of their own below it. */
export const TEST_DIR = path.resolve(__dirname, '..');
