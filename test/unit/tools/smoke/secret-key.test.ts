import type { DocumentKey, KeyDocument } from '../../../../shared/keys/key-document';
import { toDigestForm } from '../../../../shared/keys/key-material';
import { chooseSmokeKey } from '../../../../tools/smoke/secret-key';

const NOW = Date.parse('2026-06-01T12:00:00Z');
const OLD = 'test-old-key-0123456789abcdef';
const NEW = 'test-new-key-0123456789abcdef';
const DIGEST = toDigestForm('test-digest-key-0123456789abcdef');

const plain = (stored: string): DocumentKey => ({ stored });
const expiring = (stored: string, expires: string): DocumentKey => ({ stored, expires });
const documentWith = (appId: string, keys: readonly DocumentKey[]): KeyDocument =>
  new Map([[appId, { keys }]]);

describe('chooseSmokeKey', () => {
  it.each<[string, string, readonly DocumentKey[], object]>([
    [
      'takes the newest plain key: the last in the list',
      'demo',
      [plain(OLD), plain(NEW)],
      { kind: 'key', key: NEW },
    ],
    [
      'skips digests after the newest plain key',
      'demo',
      [plain(OLD), plain(NEW), plain(DIGEST)],
      { kind: 'key', key: NEW },
    ],
    [
      'skips a newer key that has expired, and takes one that has not yet',
      'demo',
      [expiring(OLD, '2026-06-02T00:00:00Z'), expiring(NEW, '2026-06-01T12:00:00Z')],
      { kind: 'key', key: OLD },
    ],
    [
      'says when every plain key of the app has expired',
      'demo',
      [expiring(OLD, '2026-01-01T00:00:00Z'), plain(DIGEST)],
      { kind: 'expired-only' },
    ],
    ['says when the app holds only digests', 'demo', [plain(DIGEST)], { kind: 'digests-only' }],
    ['says when the app is not there', 'other', [plain(OLD)], { kind: 'unknown-app' }],
  ])('%s', (_label, holder, keys, choice) => {
    expect(chooseSmokeKey(documentWith(holder, keys), 'demo', NOW)).toEqual(choice);
  });
});
