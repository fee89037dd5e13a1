import type { RefreshedKeys } from '../../../../lambda/payment/key-cache';
import type { CountedMetricName } from '../../../../lambda/payment/metric-names';
import { refreshMetrics } from '../../../../lambda/payment/refresh-metrics';
import { parseKeyring } from '../../../../shared/keys/keyring';
import { secretSize } from '../../../../shared/keys/secret-size';
import { DEMO_KEY, PARTNER_KEY } from '../../../support/keys';

/** A key that expires within any warning window, and a full-ish secret: what the levels used to measure. */
const SECRET = JSON.stringify({
  demo: [{ key: DEMO_KEY, expires: new Date(Date.now() + 86_400_000).toISOString() }],
  partner: PARTNER_KEY,
});

function recorded() {
  const counts: CountedMetricName[] = [];
  const recorder = { count: (name: CountedMetricName) => counts.push(name) };
  return { recorder, counts };
}

function refreshedFrom(text: string): RefreshedKeys {
  return { keyring: parseKeyring(text).keyring, secretSize: secretSize(text) };
}

describe('the metrics of key refreshes', () => {
  it('count each successful refresh and each failed one, and nothing else: KeysExpiringSoon and SecretFill are the monitor’s', () => {
    const { recorder, counts } = recorded();
    const observer = refreshMetrics(recorder);

    observer.refreshSucceeded(refreshedFrom(SECRET));
    observer.refreshSucceeded(refreshedFrom('{}'));
    observer.refreshFailed();

    expect(counts).toEqual(['KeyRefreshSucceeded', 'KeyRefreshSucceeded', 'KeyRefreshFailed']);
  });
});
