import { createServer } from 'node:http';
import { RdapBootstrap } from '../../functions/core/registry/bootstrap';
import { listenOnLoopback } from './loopback';

/**
 * A registry's RDAP server on loopback (real HTTP, the client's whole path): it answers each
 * `/domain/<name>` with a record, active and expiring on the date `known` gives, or 404 when that
 * gives null; every name asked is kept in order. `bootstrap` names it for the given TLDs.
 */
export async function startRdapRegistry(options: {
  readonly tlds: readonly string[];
  readonly known: (name: string) => number | null;
}) {
  const asked: string[] = [];
  const server = createServer((req, res) => {
    const name = decodeURIComponent((req.url ?? '').split('/').pop() ?? '');
    asked.push(name);
    const expiry = options.known(name);
    res.writeHead(expiry === null ? 404 : 200, { 'content-type': 'application/rdap+json' });
    res.end(
      JSON.stringify(
        expiry === null
          ? { errorCode: 404, title: 'Not Found' }
          : {
              objectClassName: 'domain',
              ldhName: name,
              status: ['active'],
              events: [{ eventAction: 'expiration', eventDate: new Date(expiry).toISOString() }],
            },
      ),
    );
  });
  const { url, close } = await listenOnLoopback(server);
  const bootstrap = RdapBootstrap.parse(JSON.stringify({ services: [[options.tlds, [`${url}/`]]] }), 'test');
  return { url, bootstrap, asked, close };
}
