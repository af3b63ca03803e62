import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  type AccountBinding,
  type DomainMemory,
  DomainMemorySchema,
  EMPTY_HEAD,
  type FindingMemory,
  readDomainMemory,
  type StateHead,
} from '../../functions/core/memory/state';

/**
 * The stored shapes are declared once, as the schemas that read them back (state.ts), and their
 * types are what those schemas read, read-only at every depth: a remembered value is never changed
 * in place (EMPTY_HEAD is shared by every scan). These are checked by the typecheck `npm test`
 * runs first; the last test checks a schema at run time.
 */
describe('the types of what is remembered', () => {
  it('are read-only at every depth', () => {
    expectTypeOf<StateHead['problem_keys']>().toEqualTypeOf<readonly string[]>();
    expectTypeOf(EMPTY_HEAD.problem_keys).toEqualTypeOf<readonly string[]>();
    expectTypeOf<NonNullable<DomainMemory['finding']>>().toEqualTypeOf<FindingMemory>();
    expectTypeOf<FindingMemory>().toEqualTypeOf<Readonly<FindingMemory>>();
    expectTypeOf<NonNullable<StateHead['account']>>().toEqualTypeOf<AccountBinding>();
    expectTypeOf<AccountBinding>().toEqualTypeOf<{ readonly salt: string; readonly hash: string }>();
  });

  it('take a read-only list of keys, as a saved state gives one', () => {
    const saved: readonly string[] = ['domain:x.nl~0123456789ab'];
    const head: StateHead = { ...EMPTY_HEAD, problem_keys: saved };
    expect(head.problem_keys).toBe(saved);
  });

  it('are what the schema reads back', () => {
    const memory: DomainMemory = { watched: {}, finding: null, alerted: null };
    expect(DomainMemorySchema.parse(memory)).toEqual(memory);
  });

  // Every alert memory this version writes has its first alert (nextAlertMemory); one without is no
  // format of a release (issue 32: no compatibility code), and reads as damage, not as `at`.
  it('refuse an alert memory without its first alert (first_at)', () => {
    const at = '2026-11-20T06:00:00.000Z';
    const alerted = { kind: 'expired', severity: 'critical', stage: 0, at };
    const memory = { watched: {}, finding: null, alerted };
    expect(() => readDomainMemory(memory, 'x.nl', 'state.json')).toThrow('domains["x.nl"].alerted.first_at');
    expect(
      readDomainMemory({ ...memory, alerted: { ...alerted, first_at: at } }, 'x.nl', 'state.json'),
    ).toEqual({
      ...memory,
      alerted: { ...alerted, first_at: at },
    });
  });
});
