import { plural } from '../base/text';

/**
 * What the registry check tells of each RDAP server where something went wrong: one info line per
 * server that failed, one naming the domains its registry does not know and why they are no findings,
 * one per status it answered about single names (400, 410).
 */

/** What one RDAP server did in this check, when something went wrong there (always info). */
export interface RegistryProblem {
  /** The server's origin. */
  readonly server: string;
  readonly severity: 'info';
  readonly reason: string;
  /** Domains of this server left unchecked because of it (the failed lookups included). */
  readonly domains_not_checked: number;
}

/** What the info lines tell of one server (serverProblems). */
export interface ServerTally {
  failuresInRow: number;
  stopped: boolean;
  /** It asked for a longer wait (Retry-After) than the scan makes: stopped by its own word. */
  asked: boolean;
  lastError: string;
  notChecked: number;
  notFound: string[];
  /** Domains it answered for with a domain object: what makes its 404s believable. */
  known: number;
  /** Its 404s of gTLD domains were not believed (judgeUnknown). */
  distrusted: boolean;
  /** Of those asked again, how many it answered with the domain: a 404 it does not repeat. */
  contradicted: number;
  /** Names it answered 400 or 410 for (an answer about that name: RdapQueryError), by status. */
  readonly perName: Map<number, string[]>;
  /** It answered only 400 or 410 to its first lookups, and was left alone: lastError says so itself. */
  refusedAll: boolean;
  /** Its would-be findings' 404s not asked again (it was left alone first): no findings. */
  notAskedAgain: number;
  /** Its would-be findings' 404s asked again without an answer (a failure, the scan's time): no findings. */
  unansweredAgain: number;
}

const NOT_FOUND_NAMED = 5;

/** One info line per server that failed, and one naming the domains a registry does not know. */
export function serverProblems(servers: ReadonlyMap<string, ServerTally>): RegistryProblem[] {
  const problems: RegistryProblem[] = [];
  for (const [server, state] of servers) {
    if (state.lastError)
      problems.push({
        server,
        severity: 'info',
        reason:
          state.stopped && !state.asked && !state.refusedAll
            ? `${state.lastError}; left alone for the rest of this scan after ${state.failuresInRow} failed lookups in a row`
            : state.lastError,
        domains_not_checked: state.notChecked,
      });
    if (state.notFound.length)
      problems.push({
        server,
        severity: 'info',
        reason: `the registry does not know ${plural(state.notFound.length, 'domain')} the reseller lists (HTTP 404), e.g. ${state.notFound.slice(0, NOT_FOUND_NAMED).join(', ')}${state.distrusted ? distrustedBecause(state) : ''}${unrepeatedBecause(state)}: check them in the reseller's control panel`,
        domains_not_checked: 0,
      });
    for (const [status, named] of state.perName)
      problems.push({
        server,
        severity: 'info',
        reason: `it answered HTTP ${status} ${status === 410 ? '(Gone)' : '(Bad Request: it could not read the query for the name)'} for ${plural(named.length, 'domain')}, e.g. ${named.slice(0, NOT_FOUND_NAMED).join(', ')}: not checked, and no finding; check them in the reseller's control panel`,
        domains_not_checked: named.length,
      });
  }
  return problems;
}

/** Why a server's 404s were not taken as findings, for its info line. */
function distrustedBecause(state: ServerTally): string {
  return state.contradicted
    ? `; its server answered ${plural(state.contradicted, 'domain')} with the domain when asked again after a 404, so its 404s are not taken as findings (a backend of it may be broken)`
    : `; its server knew ${state.known} of the domains asked, so its 404s are not taken as findings (it may be misconfigured)`;
}

/** Why some of a server's 404s that would be findings are not: they were not repeated. */
function unrepeatedBecause(state: ServerTally): string {
  const why: string[] = [];
  if (state.notAskedAgain)
    why.push(`${plural(state.notAskedAgain, 'domain')} not asked again (its server was left alone first)`);
  if (state.unansweredAgain)
    why.push(
      `${plural(state.unansweredAgain, 'domain')} with no answer when asked again (a failure, or the scan's time)`,
    );
  return why.length ? `; of them, ${why.join(' and ')}: a 404 not repeated is not taken as a finding` : '';
}
