import { toDigestForm } from '../../../../shared/keys/key-material';
import { chooseSmokeKey } from '../../../../tools/smoke/secret-key';

const OLD = 'test-old-key-0123456789abcdef';
const NEW = 'test-new-key-0123456789abcdef';
const DIGEST = toDigestForm('test-digest-key-0123456789abcdef');

describe('chooseSmokeKey', () => {
  it('takes the newest plain key: the last in the list', () => {
    expect(chooseSmokeKey(new Map([['demo', [OLD, NEW]]]), 'demo')).toEqual({ kind: 'key', key: NEW });
  });

  it('skips digests after the newest plain key', () => {
    expect(chooseSmokeKey(new Map([['demo', [OLD, NEW, DIGEST]]]), 'demo')).toEqual({
      kind: 'key',
      key: NEW,
    });
  });

  it('says when the app holds only digests', () => {
    expect(chooseSmokeKey(new Map([['demo', [DIGEST]]]), 'demo')).toEqual({ kind: 'digests-only' });
  });

  it('says when the app is not there', () => {
    expect(chooseSmokeKey(new Map([['other', [OLD]]]), 'demo')).toEqual({ kind: 'unknown-app' });
  });
});
