import { constants } from 'node:fs';
import { appendFile, type FileHandle, mkdir, open, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { smsAsDelivered } from '../core/alerts/alert';
import type { AlertMessage } from '../core/alerts/message';
import { PublishError } from '../core/base/errors';
import type { AlertSender } from '../use-cases/publish-alert';

/**
 * `scan --alert-to stdout|FILE`: the alert delivered on this machine instead of through SNS, so
 * memory between scans can be tried without an SNS emulator. What is written is what the topic's
 * subscribers would get: the subject, the e-mail digest and the SMS of the one message built for
 * SNS (cut to SNS's size the same way). A FILE is appended to, one alert after the other, like a mailbox.
 */

/** Where a local alert goes: `stdout` (through `write`), or a file path. */
export type LocalAlertTarget = { readonly kind: 'stdout' } | { readonly kind: 'file'; readonly path: string };

/** `--alert-to`'s value: `stdout`, or anything else as a file path. */
export const parseAlertTarget = (text: string): LocalAlertTarget =>
  text === 'stdout' ? { kind: 'stdout' } : { kind: 'file', path: text };

/** The alert as its subscribers read it: subject and digest (e-mail), then the SMS. */
export function renderDelivered(alert: AlertMessage): string {
  const variants = JSON.parse(alert.message) as { email: string; sms: string };
  const held = alert.attributes.sms === 'held' ? '; held by quiet hours, not sent with this message' : '';
  return (
    `Subject: ${alert.subject}\n\n${variants.email}\n\n` +
    `--- SMS (critical only, as a phone receives it${held}) ---\n${smsAsDelivered(variants.sms)}\n`
  );
}

/**
 * A sender that delivers to `target`; the id it returns says where the alert went. Delivered means
 * written: `write` resolves once stdout took the text, and a write that fails (a reader that went
 * away, a full disk) is a PublishError, so a scan with state saves nothing for an alert nobody got.
 */
export function localSender(
  target: LocalAlertTarget,
  write: (text: string) => void | Promise<void>,
): AlertSender {
  return async (alert) => {
    const text = renderDelivered(alert);
    if (target.kind === 'stdout') {
      try {
        await write(text);
      } catch (error) {
        const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
        throw new PublishError(`the alert to stdout did not arrive whole (${reason})`, { cause: error });
      }
      return 'stdout';
    }
    try {
      await mkdir(dirname(target.path), { recursive: true });
      const pipe = await pipeWriter(target.path);
      if (!pipe) await appendFile(target.path, `${text}\n`, { mode: 0o600 });
      else
        try {
          await pipe.writeFile(`${text}\n`);
        } finally {
          await pipe.close();
        }
    } catch (error) {
      throw new PublishError(`could not write the alert to ${target.path}: ${(error as Error).message}`, {
        cause: error,
      });
    }
    return target.path;
  };
}

/**
 * The writer of a named pipe at `path`, or null when it is none. A pipe nobody reads would hold a
 * plain open, and the process past Ctrl-C (exit waits for the libuv thread blocked in it), until
 * someone does: refused at once instead. A reader waiting on the pipe counts, so
 * `cat pipe & sentinel scan --alert-to pipe` works; the probe stays open until the writer is, so
 * that reader never sees an end before the alert.
 */
async function pipeWriter(path: string): Promise<FileHandle | null> {
  const stats = await stat(path).catch(() => null);
  if (!stats?.isFIFO()) return null;
  let probe: FileHandle;
  try {
    probe = await open(path, constants.O_WRONLY | constants.O_NONBLOCK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENXIO') throw error;
    throw new Error('nobody is reading this named pipe (FIFO); start its reader before the scan');
  }
  try {
    return await open(path, 'a');
  } finally {
    await probe.close();
  }
}
