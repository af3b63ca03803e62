import { BASE_URL_OPTION, type Command, STATE_OPTION } from '../command';
import { SILENCE_ENV, silence } from './snooze';

export const ack: Command = {
  name: 'ack',
  args: '<domain>',
  summary: 'leave a domain out of alerts until its expiry date, status or auto-renew changes',
  about:
    'What the acknowledge link’s button does ("we let this one go"), from the command line. Needs the state store the scans use.',
  options: { state: STATE_OPTION, 'base-url': BASE_URL_OPTION },
  env: SILENCE_ENV,
  run: (args, io) => silence(ack, 'acknowledge', 0, args, io),
};
