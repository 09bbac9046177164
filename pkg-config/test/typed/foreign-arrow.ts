// Type-checked by write.test.mjs: another version's Table and RecordBatch are `WriteRows`.
import { tableFromArrays } from 'apache-arrow-17';
import type { HudiTable } from '../../dist/index.js';

export async function writeFromArrow17(t: HudiTable): Promise<void> {
  const rows = tableFromArrays({ txn_id: ['a'], region: ['us'] });
  await t.upsert(rows);
  await t.insert(rows.batches[0]);
  await t.delete(rows);
}
