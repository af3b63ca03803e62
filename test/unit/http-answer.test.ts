import { describe, expect, it } from 'vitest';
import { wantsJson } from '../../functions/handlers/http-answer';

const asks = (accept: string | undefined) => wantsJson({ accept });

describe('wantsJson (content negotiation by quality, RFC 9110 12.5.1)', () => {
  it('answers JSON where JSON is preferred, however the header is spelt', () => {
    for (const accept of [
      'application/json',
      'Application/JSON; charset=utf-8',
      'application/json, text/html;q=0.9',
      'text/html;q=0, application/json',
      'application/json, */*;q=0.1',
      'application/json, text/plain, */*',
      'text/*;q=0.5, application/json',
    ])
      expect(asks(accept), accept).toBe(true);
  });

  it('answers the page to a browser, to no preference, and where HTML is as good or better', () => {
    for (const accept of [
      undefined,
      '',
      '*/*',
      'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
      'application/json, text/html',
      'application/json;q=0.5, text/html',
      'application/json;q=0, */*',
      'application/json;q=0',
      'application/json-seq',
      'application/jsonx',
      'application/*, text/html',
    ])
      expect(asks(accept), String(accept)).toBe(false);
  });

  it('reads a quality it cannot parse as none', () => {
    expect(asks('application/json;q=lots')).toBe(false);
    expect(asks('application/json;q=0.7, text/html;q=junk')).toBe(true);
  });
});
