import { PublicKeyCache } from '../../../../lambda/secret-scanning/public-keys';
import { captureLogs } from '../../../support/capture-logger';
import { createGithubSigner, publicKeysDocument } from '../../../support/secret-scanning';

const MINUTE = 60_000;
const first = createGithubSigner('first');
const second = createGithubSigner('second');

/** A cache over a keys URL whose answers the test sets, on a clock the test moves. */
function cacheOver(answers: (() => Promise<string>)[]) {
  let clock = 1_000_000;
  const fetchDocument = jest.fn(() => {
    const next = answers.shift();
    if (next === undefined) throw new Error('no answer left');
    return next();
  });
  const cache = new PublicKeyCache({ fetchDocument, now: () => clock, logger: captureLogs().logger });
  return {
    cache,
    fetchDocument,
    advance: (ms: number) => {
      clock += ms;
    },
  };
}

const serves = (text: string) => () => Promise.resolve(text);
const fails = (message: string) => () => Promise.reject(new Error(message));

describe('PublicKeyCache', () => {
  it('fetches the keys on first use and then serves them from memory, not refreshing for an unknown identifier within a minute of that load', async () => {
    const { cache, fetchDocument } = cacheOver([serves(publicKeysDocument([first, second]))]);

    expect((await cache.lookup('first')).kind).toBe('found');
    expect((await cache.lookup('second')).kind).toBe('found');
    expect((await cache.lookup('first')).kind).toBe('found');
    expect(await cache.lookup('made-up')).toEqual({ kind: 'unknown' });
    expect(fetchDocument).toHaveBeenCalledTimes(1);
  });

  it('refreshes once for an identifier it does not know, and finds a key GitHub added since', async () => {
    const { cache, fetchDocument, advance } = cacheOver([
      serves(publicKeysDocument([first])),
      serves(publicKeysDocument([second, first])),
    ]);
    await cache.lookup('first');
    advance(MINUTE);

    expect((await cache.lookup('second')).kind).toBe('found');
    expect(fetchDocument).toHaveBeenCalledTimes(2);
  });

  it('answers unknown after its one refresh, and refreshes again for unknown identifiers at most once a minute', async () => {
    const document = publicKeysDocument([first]);
    const { cache, fetchDocument, advance } = cacheOver([
      serves(document),
      serves(document),
      serves(document),
    ]);
    await cache.lookup('first');
    advance(MINUTE);

    expect(await cache.lookup('made-up-1')).toEqual({ kind: 'unknown' });
    expect(fetchDocument).toHaveBeenCalledTimes(2);
    for (let request = 0; request < 50; request++) {
      advance(1_000);
      expect(await cache.lookup(`made-up-${request}`)).toEqual({ kind: 'unknown' });
    }
    // 50 s later: still within the minute of the last refresh.
    expect(fetchDocument).toHaveBeenCalledTimes(2);

    advance(10_000);
    expect(await cache.lookup('made-up-again')).toEqual({ kind: 'unknown' });
    expect(fetchDocument).toHaveBeenCalledTimes(3);
  });

  it.each([
    ['answers nothing (the fetch fails)', fails('the keys URL did not answer within 3000 ms')],
    ['answers garbage', serves('<html>Service Unavailable</html>')],
    ['answers a document without a usable key', serves('{"public_keys":[{"key_identifier":"x","key":"y"}]}')],
  ])('is unavailable when the keys URL %s, and fetches again only a minute later', async (_case, answer) => {
    const { cache, fetchDocument, advance } = cacheOver([answer, serves(publicKeysDocument([first]))]);

    expect(await cache.lookup('first')).toMatchObject({ kind: 'unavailable' });
    advance(MINUTE - 1);
    expect(await cache.lookup('first')).toMatchObject({ kind: 'unavailable' });
    expect(fetchDocument).toHaveBeenCalledTimes(1);

    advance(1);
    expect((await cache.lookup('first')).kind).toBe('found');
    expect(fetchDocument).toHaveBeenCalledTimes(2);
  });

  it('is unavailable for an unknown identifier when its refresh fails: it cannot tell', async () => {
    const { cache, advance } = cacheOver([serves(publicKeysDocument([first])), fails('ECONNRESET')]);
    await cache.lookup('first');
    advance(MINUTE);

    expect(await cache.lookup('second')).toMatchObject({ kind: 'unavailable' });
  });

  it('refreshes keys older than an hour, and keeps serving them when that refresh fails', async () => {
    const { cache, fetchDocument, advance } = cacheOver([
      serves(publicKeysDocument([first])),
      fails('ECONNREFUSED'),
      serves(publicKeysDocument([second])),
    ]);
    await cache.lookup('first');
    advance(60 * MINUTE);

    expect((await cache.lookup('first')).kind).toBe('found');
    expect(fetchDocument).toHaveBeenCalledTimes(2);

    advance(MINUTE);
    // GitHub withdrew "first": the hourly refresh drops it.
    expect(await cache.lookup('first')).toEqual({ kind: 'unknown' });
    expect(fetchDocument).toHaveBeenCalledTimes(3);
  });

  it('makes one fetch for lookups that arrive while one is under way', async () => {
    let release: (text: string) => void = () => undefined;
    const pending = new Promise<string>((resolve) => {
      release = resolve;
    });
    const { cache, fetchDocument } = cacheOver([() => pending]);
    const lookups = [cache.lookup('first'), cache.lookup('first'), cache.lookup('second')];
    release(publicKeysDocument([first]));

    expect((await Promise.all(lookups)).map((lookup) => lookup.kind)).toEqual(['found', 'found', 'unknown']);
    expect(fetchDocument).toHaveBeenCalledTimes(1);
  });
});
