import { plural } from '../base/text';
import { shownOrigin } from './rdap-http';

/**
 * What the registry check tells of each RDAP server where something went wrong: one info line per
 * server that failed, one naming the domains its registry does not know and why they are no findings,
 * one naming those it answered 404 once and could not be asked again (not checked), one per status
 * it answered about single names (400).
 */

/** What one RDAP server did in this check, when something went wrong there (always info). */
export interface RegistryProblem {
  /** The server's origin, as {@link shownOrigin} shows it (a token-like host label `…`). */
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
  /** Names it answered 400 for (an answer about that name: RdapQueryError), by status. */
  readonly perName: Map<number, string[]>;
  /** It was left alone for what it answered (only 400s, only 404s): lastError says why itself. */
  saysWhy: boolean;
  /**
   * Its would-be findings' 404s that were not repeated because the second ask did not happen or got
   * no answer: neither findings nor "the registry does not know it", but domains not checked.
   */
  readonly unrepeated: string[];
  /** Of those, not asked again (it was left alone first). */
  notAskedAgain: number;
  /** Of those, asked again without an answer (a failure). */
  unansweredAgain: number;
  /** Of those, not asked again because the scan's time ran out. */
  outOfTimeAgain: number;
}

const NOT_FOUND_NAMED = 5;

/** One info line per server that failed, and one naming the domains a registry does not know. */
export function serverProblems(servers: ReadonlyMap<string, ServerTally>): RegistryProblem[] {
  const problems: RegistryProblem[] = [];
  for (const [origin, state] of servers) {
    const server = shownOrigin(origin);
    if (state.lastError)
      problems.push({
        server,
        severity: 'info',
        reason:
          state.stopped && !state.asked && !state.saysWhy
            ? `${state.lastError}; left alone for the rest of this scan after ${state.failuresInRow} failed lookups in a row`
            : state.lastError,
        domains_not_checked: state.notChecked,
      });
    if (state.notFound.length)
      problems.push({
        server,
        severity: 'info',
        reason: `the registry does not know ${plural(state.notFound.length, 'domain')} the reseller lists (HTTP 404 or 410), e.g. ${state.notFound.slice(0, NOT_FOUND_NAMED).join(', ')}${state.distrusted ? distrustedBecause(state) : ''}: check them in the reseller's control panel`,
        domains_not_checked: 0,
      });
    if (state.unrepeated.length)
      problems.push({
        server,
        severity: 'info',
        reason: `it answered HTTP 404 once for ${plural(state.unrepeated.length, 'domain')} the reseller lists, e.g. ${state.unrepeated.slice(0, NOT_FOUND_NAMED).join(', ')}, and ${unrepeatedBecause(state)}: a 404 not repeated is no finding, so they are not checked this time; check them in the reseller's control panel`,
        domains_not_checked: state.unrepeated.length,
      });
    for (const [status, named] of state.perName)
      problems.push({
        server,
        severity: 'info',
        reason: `it answered HTTP ${status} (Bad Request: it could not read the query for the name) for ${plural(named.length, 'domain')}, e.g. ${named.slice(0, NOT_FOUND_NAMED).join(', ')}: not checked, and no finding; check them in the reseller's control panel`,
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

/** Why a server's would-be findings' 404s were not asked again, or not answered. */
function unrepeatedBecause(state: ServerTally): string {
  const why: string[] = [];
  if (state.notAskedAgain)
    why.push(`${plural(state.notAskedAgain, 'domain')} not asked again (its server was left alone first)`);
  if (state.outOfTimeAgain)
    why.push(`${plural(state.outOfTimeAgain, 'domain')} not asked again (the scan's time ran out)`);
  if (state.unansweredAgain)
    why.push(`${plural(state.unansweredAgain, 'domain')} with no answer when asked again (a failure)`);
  return why.join(' and ');
}
