import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStateTable, DynamoDbStateStore } from '../../functions/aws/dynamodb-state-store';
import { acknowledgementOf, snoozeOf } from '../../functions/core/memory/actions';
import { StateConflictError } from '../../functions/core/memory/state';
import { StateActionStore } from '../../functions/use-cases/state-action-store';
import { startDynalite } from '../support/dynalite';
import { domainFinding, NOW_ISO } from '../support/report';
import { loadState } from '../support/whole-state';

const SCOPE = 'https://api.reseller.test';
const NOW = Date.parse(NOW_ISO);
let db: Awaited<ReturnType<typeof startDynalite>>;
beforeAll(async () => {
  db = await startDynalite();
  await createStateTable(db.client(), 'actions');
});
afterAll(() => db?.close());

describe('StateActionStore on DynamoDB (real SDK client against dynalite)', () => {
  it('keeps snoozes and acknowledgements in the state the scans read, one conditional step each', async () => {
    const state = new DynamoDbStateStore({ client: db.client(), tableName: 'actions', scope: SCOPE });
    const store = new StateActionStore(state, SCOPE);
    const soon = domainFinding('soon.nl', 'expiring', 'critical', 3);
    const later = domainFinding('later.nl', 'expiring', 'warning', 20);
    await store.snooze('soon.nl', snoozeOf(soon, 7, NOW));
    await store.acknowledge('later.nl', acknowledgementOf(later, NOW));
    await store.snooze('later.nl', snoozeOf(later, 1, NOW));

    const loaded = await loadState(state, SCOPE);
    expect(loaded.generation).toBe(3);
    expect(loaded.lease).toBeNull();
    const actions = Object.entries(loaded.state.domains).map(([name, memory]) => [name, memory.actions]);
    expect(Object.fromEntries(actions)).toEqual({
      'soon.nl': { snooze: snoozeOf(soon, 7, NOW) },
      'later.nl': { acknowledged: acknowledgementOf(later, NOW), snooze: snoozeOf(later, 1, NOW) },
    });
  });

  it('refuses to write while a scan holds the lease, and says so', async () => {
    const state = new DynamoDbStateStore({ client: db.client(), tableName: 'actions', scope: SCOPE });
    const loaded = await loadState(state, SCOPE);
    await state.claim(loaded.generation, { owner: 'scan-1', expiresAt: Date.now() + 60_000 });
    const store = new StateActionStore(state, SCOPE, { retry: { attempts: 2, backoffMs: 10 } });
    await expect(
      store.snooze('soon.nl', snoozeOf(domainFinding('soon.nl', 'expiring', 'critical', 3), 30, NOW)),
    ).rejects.toThrow(StateConflictError);
    await state.release(loaded.generation, 'scan-1');
    expect((await loadState(state, SCOPE)).generation).toBe(loaded.generation);
  });
});
