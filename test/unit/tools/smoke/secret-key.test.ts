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
  it('takes the newest plain key: the last in the list', () => {
    expect(chooseSmokeKey(documentWith('demo', [plain(OLD), plain(NEW)]), 'demo', NOW)).toEqual({
      kind: 'key',
      key: NEW,
    });
  });

  it('skips digests after the newest plain key', () => {
    expect(
      chooseSmokeKey(documentWith('demo', [plain(OLD), plain(NEW), plain(DIGEST)]), 'demo', NOW),
    ).toEqual({ kind: 'key', key: NEW });
  });

  it('skips a newer key that has expired, and takes one that has not yet', () => {
    const keys = [expiring(OLD, '2026-06-02T00:00:00Z'), expiring(NEW, '2026-06-01T12:00:00Z')];

    expect(chooseSmokeKey(documentWith('demo', keys), 'demo', NOW)).toEqual({ kind: 'key', key: OLD });
  });

  it('says when every plain key of the app has expired', () => {
    const keys = [expiring(OLD, '2026-01-01T00:00:00Z'), plain(DIGEST)];

    expect(chooseSmokeKey(documentWith('demo', keys), 'demo', NOW)).toEqual({ kind: 'expired-only' });
  });

  it('says when the app holds only digests', () => {
    expect(chooseSmokeKey(documentWith('demo', [plain(DIGEST)]), 'demo', NOW)).toEqual({
      kind: 'digests-only',
    });
  });

  it('says when the app is not there', () => {
    expect(chooseSmokeKey(documentWith('other', [plain(OLD)]), 'demo', NOW)).toEqual({ kind: 'unknown-app' });
  });
});
