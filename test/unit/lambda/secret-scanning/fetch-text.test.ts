import { createServer, type Server, type ServerResponse } from 'node:http';
import { fetchText } from '../../../../lambda/secret-scanning/fetch-text';
import { closeServer, listen } from '../../../support/fault-proxy';
import { freeLoopbackPort } from '../../../support/loopback';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map((server) => {
      server.closeAllConnections();
      return closeServer(server, new Set());
    }),
  );
});

/** fetchText of a loopback keys server whose every answer the test writes. */
async function fetchFrom(
  respond: (response: ServerResponse) => void,
  limits = { deadlineMs: 2_000, maxBytes: 1_024 },
) {
  const server = createServer((_request, response) => {
    respond(response);
  });
  servers.push(server);
  const port = await listen(server, 0);
  return fetchText(`http://127.0.0.1:${port}/keys`, limits);
}

describe('fetchText', () => {
  it('gives the body of a 200 answer', async () => {
    await expect(fetchFrom((response) => response.end('{"public_keys":[]}'))).resolves.toBe(
      '{"public_keys":[]}',
    );
  });

  it('refuses an answer other than 200, redirects included', async () => {
    await expect(
      fetchFrom((response) => {
        response.writeHead(302, { location: 'http://127.0.0.1:1/elsewhere' }).end();
      }),
    ).rejects.toThrow('the keys URL answered HTTP 302');
  });

  it('abandons a body over the cap while reading it', async () => {
    await expect(fetchFrom((response) => response.end('x'.repeat(4_096)))).rejects.toThrow(
      'the keys document is over 1024 bytes',
    );
  });

  it('abandons an answer that stalls, at its deadline', async () => {
    // Headers, then nothing: the deadline covers the body too. A short deadline on a loopback server that never
    // answers is met whatever the machine's load: nothing can arrive in time.
    await expect(
      fetchFrom(
        (response) => {
          response.writeHead(200);
          response.write('{"public_');
        },
        { deadlineMs: 200, maxBytes: 1_024 },
      ),
    ).rejects.toThrow('the keys URL did not answer within 200 ms');
  });

  it('fails when nothing listens', async () => {
    const url = `http://127.0.0.1:${await freeLoopbackPort()}/keys`;

    await expect(fetchText(url, { deadlineMs: 2_000, maxBytes: 1_024 })).rejects.toThrow(/ECONNREFUSED/);
  });
});
