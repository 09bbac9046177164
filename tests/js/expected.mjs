// Node-side access to the fixture expectations and tests/data/oracle_allowances.json, for the
// tests that hand them to fixture_checks.mjs (which runs anywhere and reads no files).
import { readFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const fixturesDir = process.env.HUDI_EDGE_FIXTURES ?? join(repo, 'tests', 'data', 'fixtures');
export const allowances = JSON.parse(readFileSync(join(repo, 'tests', 'data', 'oracle_allowances.json'), 'utf8'));
export const expected = (name) => JSON.parse(readFileSync(join(fixturesDir, 'expected', `${name}.json`), 'utf8'));
