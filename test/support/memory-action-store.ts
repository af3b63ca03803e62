import type {
  Acknowledgement,
  ActionStore,
  DomainActions,
  Lapse,
  Snooze,
} from '../../functions/core/actions';

/** An ActionStore in memory, for tests of the decisions; `writes` counts every change. */
export class MemoryActionStore implements ActionStore {
  readonly location = 'memory';
  readonly actions = new Map<string, DomainActions>();
  writes = 0;
  failing = false;

  async load(): Promise<ReadonlyMap<string, DomainActions>> {
    return new Map(this.actions);
  }

  async snooze(domain: string, snooze: Snooze): Promise<void> {
    this.write(domain, { snooze });
  }

  async acknowledge(domain: string, acknowledged: Acknowledgement): Promise<void> {
    this.write(domain, { acknowledged });
  }

  async lapse(lapses: readonly Lapse[]): Promise<void> {
    for (const l of lapses) {
      const own = { ...this.actions.get(l.domain_name) };
      if (l.action === 'snooze') delete own.snooze;
      else delete own.acknowledged;
      this.actions.set(l.domain_name, own);
      this.writes++;
    }
  }

  private write(domain: string, part: DomainActions) {
    if (this.failing) throw new Error('store unavailable');
    this.actions.set(domain, { ...this.actions.get(domain), ...part });
    this.writes++;
  }
}
