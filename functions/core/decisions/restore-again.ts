import { type AuditEntry, earlierRestoreLine, earlierRestoreOf } from '../memory/audit';
import { type RestoreOutcome, storeFailedThen } from './restore-outcome';

/**
 * A second restore of a domain that still shows quarantine: one sent before may be queued at the
 * reseller (a 202), or its outcome unknown (a 504, no answer), and it outlives the 15-minute claim.
 * The restore link's page and `sentinel restore` name it, and another is sent only when asked
 * for again, explicitly: the form field {@link AGAIN_FIELD}, `sentinel restore --again`.
 */

/** The form field that asks for another restore although one was sent recently. */
export const AGAIN_FIELD = 'restore_again';

/** The earlier restore the trail holds (or none), or why the trail could not tell. */
export type EarlierRestore =
  | { readonly ok: true; readonly entry?: AuditEntry }
  | { readonly ok: false; readonly outcome: RestoreOutcome };

/**
 * Reads the trail for a restore of `domain` sent recently. No trail (no state store): none known.
 * A trail that cannot be read refuses, as one that cannot be written ahead does (503
 * `audit_unavailable`): the guard is never dropped silently, and no restore goes out unguarded.
 */
export async function readEarlierRestore(
  read: (() => Promise<readonly AuditEntry[] | null>) | undefined,
  domain: string,
  now: number,
): Promise<EarlierRestore> {
  try {
    const entries = (await read?.()) ?? [];
    const entry = earlierRestoreOf(entries, domain, now);
    return entry ? { ok: true, entry } : { ok: true };
  } catch (error) {
    return {
      ok: false,
      outcome: {
        kind: 'audit_unavailable',
        status: 503,
        title: `${domain} was not restored`,
        message: `${domain} was NOT restored: the audit trail could not be read to tell whether a restore of it was sent already (a second may be charged again), so nothing was sent. ${storeFailedThen(error)}`,
        detail: `the audit trail could not be read for an earlier restore: ${error instanceof Error ? error.message : String(error)}`,
      },
    };
  }
}

/**
 * True when {@link AGAIN_FIELD} asks for another restore after `entry`: a program's yes (`yes`,
 * `on`, `true`, `1`), or the page's box, whose value is the time of the restore the page named:
 * a form sent again (a reload) after a newer restore went out names that one no more.
 */
export function againConfirmed(value: string | undefined, entry: AuditEntry): boolean {
  return value !== undefined && (/^(?:yes|on|true|1)$/i.test(value.trim()) || value === entry.at);
}

/** A POST for another restore after `entry` without {@link AGAIN_FIELD}: nothing is sent. */
export function resendUnconfirmed(domain: string, entry: AuditEntry): RestoreOutcome {
  return {
    kind: 'resend_unconfirmed',
    status: 409,
    title: `${domain} was not restored again`,
    message: `${earlierRestoreLine(entry, domain)} Nothing was sent: to send another restore, confirm that it is wanted (the form's "${AGAIN_FIELD}" field).`,
  };
}
