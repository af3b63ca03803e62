import type {
  Acknowledgement,
  ActionStore,
  DomainActions,
  Snooze,
} from '../../functions/core/memory/actions';

/** An ActionStore in memory, for tests of the decisions; `writes` counts every change. */
export class MemoryActionStore implements ActionStore {
  readonly location = 'memory';
  readonly actions = new Map<string, DomainActions>();
  writes = 0;
  failing = false;

  async snooze(domain: string, snooze: Snooze): Promise<void> {
    this.write(domain, { snooze });
  }

  async acknowledge(domain: string, acknowledged: Acknowledgement): Promise<void> {
    this.write(domain, { acknowledged });
  }

  private write(domain: string, part: DomainActions) {
    if (this.failing) throw new Error('store unavailable');
    this.actions.set(domain, { ...this.actions.get(domain), ...part });
    this.writes++;
  }
}
