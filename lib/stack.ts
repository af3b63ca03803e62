import { Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { DomainSentinel, type DomainSentinelProps } from './domain-sentinel';

export interface DomainSentinelStackProps extends StackProps {
  /** The deploy settings (bin/app.ts reads them from a settings file and `-c key=value`). */
  readonly settings: DomainSentinelProps;
}

/**
 * The clone-and-deploy stack of bin/app.ts: one DomainSentinel, with id `Default` so its resources
 * keep the logical ids they had when the stack built them itself (the API's id is in every link sent).
 */
export class DomainSentinelStack extends Stack {
  readonly sentinel: DomainSentinel;

  constructor(scope: Construct, id: string, props: DomainSentinelStackProps) {
    super(scope, id, props);
    this.sentinel = new DomainSentinel(this, 'Default', props.settings);
  }

  // The construct's parts, as the stack exposed them before it was a construct.
  get scan() {
    return this.sentinel.scan;
  }
  get web() {
    return this.sentinel.web;
  }
  get reports() {
    return this.sentinel.reports;
  }
  get alerts() {
    return this.sentinel.alerts;
  }
  get watchdog() {
    return this.sentinel.watchdog;
  }
  get topicKey() {
    return this.sentinel.topicKey;
  }
  get state() {
    return this.sentinel.state;
  }
}
