import type { RefreshedKeys } from '../../../../lambda/payment/key-cache';
import type { CountedMetricName, MeasuredMetricName } from '../../../../lambda/payment/metric-names';
import { refreshMetrics } from '../../../../lambda/payment/refresh-metrics';
import { toDigestForm } from '../../../../shared/keys/key-material';
import { parseKeyring } from '../../../../shared/keys/keyring';
import { secretSize } from '../../../../shared/keys/secret-size';
import { DEMO_KEY, DEMO_NEXT_KEY, HASHED_APP_KEY, PARTNER_KEY } from '../../../support/keys';

const NOW = Date.parse('2026-11-21T12:00:00Z');
const DAY_MS = 86_400_000;
const FOURTEEN_DAYS_MS = 14 * DAY_MS;

const at = (offsetMs: number): string => new Date(NOW + offsetMs).toISOString();

/** Every form of the secret, with expiries on both sides of now and of the warning window's end. */
const SECRET = JSON.stringify({
  demo: [
    { key: DEMO_KEY, expires: at(3 * DAY_MS) },
    { key: DEMO_NEXT_KEY, expires: at(FOURTEEN_DAYS_MS) },
  ],
  partner: {
    keys: [{ key: PARTNER_KEY, expires: at(FOURTEEN_DAYS_MS + 1) }],
    allowedCidrs: ['203.0.113.0/24'],
  },
  hashed: [
    { key: toDigestForm(HASHED_APP_KEY), expires: at(-1) },
    toDigestForm('test-never-expiring-0123456789'),
  ],
});

function recorded() {
  const counts: CountedMetricName[] = [];
  const levels: [MeasuredMetricName, number][] = [];
  const recorder = {
    count: (name: CountedMetricName) => counts.push(name),
    measure: (name: MeasuredMetricName, value: number) => levels.push([name, value]),
  };
  return { recorder, counts, levels };
}

function refreshedFrom(text: string): RefreshedKeys {
  return { keyring: parseKeyring(text).keyring, secretSize: secretSize(text) };
}

describe('the metrics of key refreshes', () => {
  it('count a successful refresh, the keys that expire within the warning window, and the secret’s fill', () => {
    const { recorder, counts, levels } = recorded();
    const observer = refreshMetrics(recorder, { keyExpiryWarningMs: FOURTEEN_DAYS_MS, now: () => NOW });

    observer.refreshSucceeded(refreshedFrom(SECRET));

    // demo's every key ends within 14 days (in 3 days, in exactly 14): warned. partner's lasts past 14 days, and
    // hashed holds a key that never expires: not.
    expect(counts).toEqual(['KeyRefreshSucceeded']);
    expect(levels).toEqual([
      ['KeysExpiringSoon', 2],
      ['SecretFill', (Buffer.byteLength(SECRET) / 65_536) * 100],
    ]);
  });

  it('read the clock at each refresh, so a key enters the window without any change to the secret', () => {
    const { recorder, levels } = recorded();
    let now = NOW;
    const observer = refreshMetrics(recorder, { keyExpiryWarningMs: DAY_MS, now: () => now });
    // One app's last key ends in 3 days; another's old key too, beside one that lives on (not a warning).
    const secret = JSON.stringify({
      ending: [{ key: DEMO_KEY, expires: at(3 * DAY_MS) }],
      rolling: [{ key: DEMO_NEXT_KEY, expires: at(3 * DAY_MS) }, PARTNER_KEY],
    });

    observer.refreshSucceeded(refreshedFrom(secret));
    now += 2 * DAY_MS + 1;
    observer.refreshSucceeded(refreshedFrom(secret));

    expect(levels.filter(([name]) => name === 'KeysExpiringSoon').map(([, value]) => value)).toEqual([0, 1]);
  });

  it('report zero keys expiring for a secret of keys without expiry', () => {
    const { recorder, levels } = recorded();
    const observer = refreshMetrics(recorder, { keyExpiryWarningMs: FOURTEEN_DAYS_MS, now: () => NOW });

    observer.refreshSucceeded(refreshedFrom(JSON.stringify({ demo: DEMO_KEY })));

    expect(levels[0]).toEqual(['KeysExpiringSoon', 0]);
  });

  it('count a failed refresh and measure nothing, since nothing was read', () => {
    const { recorder, counts, levels } = recorded();
    const observer = refreshMetrics(recorder, { keyExpiryWarningMs: FOURTEEN_DAYS_MS, now: () => NOW });

    observer.refreshFailed();

    expect([counts, levels]).toEqual([['KeyRefreshFailed'], []]);
  });
});
