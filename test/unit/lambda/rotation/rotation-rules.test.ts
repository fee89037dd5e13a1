import { keyIdOf, parseKeyDocument, serializeKeyDocument } from '../../../../shared/keys/key-document';
import { toDigestForm } from '../../../../shared/keys/key-material';
import { rotateAllApps, type RotationPolicy } from '../../../../shared/keys/rotation';
import { TIMESTAMP_RULE } from '../../../../shared/keys/timestamp';
import {
  decideStep,
  isRotationStep,
  pendingVersionProblems,
  RotationError,
  type PendingCheck,
  type RotationState,
} from '../../../../lambda/rotation/rotation-rules';

const TOKEN = '6a0f8b4e-3c1d-4f2a-9b7e-1d2c3b4a5f60';
const CURRENT_VERSION = '0e1d2c3b-4a59-4687-9a1b-2c3d4e5f6a7b';

const KEY_A = 'test-rules-key-a-0123456789';
const KEY_B = 'test-rules-key-b-0123456789';
const FRESH = 'test-rules-fresh-0123456789';
const FRESH_2 = 'test-rules-fresh-2-0123456789';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const HASHED = toDigestForm('test-rules-hashed-0123456789');

function state(stages: Record<string, string[]>, rotationEnabled = true): RotationState {
  return { rotationEnabled, versionIdsToStages: stages };
}

describe('decideStep', () => {
  it('runs the step for the pending version', () => {
    const decision = decideStep(state({ [CURRENT_VERSION]: ['AWSCURRENT'], [TOKEN]: ['AWSPENDING'] }), TOKEN);

    expect(decision).toEqual({ action: 'run' });
  });

  it.each([
    ['with AWSPENDING removed', ['AWSCURRENT'], false],
    ['with AWSPENDING still attached', ['AWSCURRENT', 'AWSPENDING'], true],
  ])('skips a version that is already current, %s', (_label, stages, pendingLabelLeft) => {
    const decision = decideStep(state({ [CURRENT_VERSION]: ['AWSPREVIOUS'], [TOKEN]: stages }), TOKEN);

    expect(decision).toEqual({ action: 'skip', pendingLabelLeft });
  });

  it.each([
    [
      'rotation is not enabled',
      state({ [CURRENT_VERSION]: ['AWSCURRENT'], [TOKEN]: ['AWSPENDING'] }, false),
      'rotation is not enabled for this secret',
    ],
    [
      'the token is not a version of the secret',
      state({ [CURRENT_VERSION]: ['AWSCURRENT'] }),
      `version ${TOKEN} is not a version of this secret`,
    ],
    [
      'the version is not labelled AWSPENDING',
      state({ [CURRENT_VERSION]: ['AWSCURRENT'], [TOKEN]: ['AWSPREVIOUS'] }),
      `version ${TOKEN} is not labelled AWSPENDING for rotation`,
    ],
  ])('fails when %s', (_label, rotationState, message) => {
    expect(() => decideStep(rotationState, TOKEN)).toThrow(new RotationError(message));
  });

  it('does not take an inherited property for a version', () => {
    expect(() => decideStep(state({ [CURRENT_VERSION]: ['AWSCURRENT'] }), 'toString')).toThrow(RotationError);
  });
});

describe('isRotationStep', () => {
  it.each(['createSecret', 'setSecret', 'testSecret', 'finishSecret'])('knows %s', (step) => {
    expect(isRotationStep(step)).toBe(true);
  });

  it.each(['deleteSecret', '', undefined, 3])('refuses %p', (step) => {
    expect(isRotationStep(step)).toBe(false);
  });
});

describe('pendingVersionProblems', () => {
  const policy: RotationPolicy = { keep: 2, periodMs: 30 * DAY_MS };
  /** When createSecret made the pending version. */
  const MADE_AT = Date.parse('2026-03-01T12:00:00Z');
  /** Checked a minute later, as testSecret and finishSecret usually are. */
  const CHECK: PendingCheck = { policy, now: MADE_AT + 60_000 };
  /** One period after the start of MADE_AT's rotation window (midnight: the period is in days). */
  const IN_ONE_PERIOD = '2026-03-31T00:00:00Z';

  const currentEntries = { demo: [KEY_A, KEY_B], hashed: [HASHED] };
  const current = JSON.stringify(currentEntries);
  /** What one rotation at MADE_AT makes of `current`, with FRESH as the fresh key. */
  const rotated = {
    demo: [{ key: KEY_A, expires: IN_ONE_PERIOD }, { key: KEY_B, expires: IN_ONE_PERIOD }, FRESH],
    hashed: [HASHED],
  };

  function rotationOf(text: string, madeAt: number, rotationPolicy: RotationPolicy = policy): string {
    const fresh = [FRESH, FRESH_2];
    return serializeKeyDocument(
      rotateAllApps(parseKeyDocument(text), rotationPolicy, madeAt, () => fresh.shift() ?? FRESH).document,
    );
  }

  const notOneRotation = (appId: string, why: string): string =>
    `app ${appId}: the pending keys are not one rotation of the current keys (${why})`;

  it('writes one rotation as the rules expect', () => {
    expect(rotationOf(current, MADE_AT)).toBe(JSON.stringify(rotated));
  });

  it.each<[string, RotationPolicy, number]>([
    ['checked a minute later', policy, MADE_AT + 60_000],
    ['with keep 3', { keep: 3, periodMs: 30 * DAY_MS }, MADE_AT + 60_000],
    ['with a 4-hour period', { keep: 2, periodMs: 4 * HOUR_MS }, MADE_AT + 60_000],
    ['checked on a clock a minute behind the one that made it', policy, MADE_AT - 60_000],
    [
      'checked 40 days later, when every superseded key has expired (a retried step)',
      policy,
      MADE_AT + 40 * DAY_MS,
    ],
  ])('accepts what a rotation writes, %s', (_label, rotationPolicy, now) => {
    const pending = rotationOf(current, MADE_AT, rotationPolicy);

    expect(pendingVersionProblems(current, pending, { policy: rotationPolicy, now })).toEqual([]);
  });

  it('accepts an unchanged copy (what Secrets Manager tests when rotation is set up without rotating)', () => {
    expect(pendingVersionProblems(current, current, CHECK)).toEqual([]);
  });

  it.each([
    ['pruned an expired key', { demo: [{ key: KEY_A, expires: '2026-02-01T00:00:00Z' }, KEY_B] }],
    [
      'kept a key that expired after the rotation ran, before the check',
      { demo: [{ key: KEY_A, expires: '2026-03-01T12:00:30Z' }, KEY_B] },
    ],
    [
      'ended the fresh key with an app that has an end date',
      { temporary: [{ key: KEY_A, expires: '2026-06-01T00:00:00+02:00' }] },
    ],
    [
      'left an app with no valid key as it was',
      { lapsed: [{ key: KEY_A, expires: '2026-01-01T00:00:00Z' }], demo: [KEY_B] },
    ],
    [
      'kept an allowlist, an empty one included',
      {
        shop: { keys: [KEY_A], allowedCidrs: ['203.0.113.0/24'] },
        closed: { keys: [KEY_B], allowedCidrs: [] },
      },
    ],
  ])('accepts a rotation that %s', (_label, currentValue) => {
    const currentText = JSON.stringify(currentValue);

    expect(pendingVersionProblems(currentText, rotationOf(currentText, MADE_AT), CHECK)).toEqual([]);
  });

  it.each([
    ['an app is missing', { demo: rotated.demo }, ['app hashed is missing from the pending version']],
    [
      'an app was added (an operator added it after the pending version was made)',
      { ...rotated, partner: [FRESH_2] },
      ['app partner is in the pending version but not in the current one'],
    ],
    [
      'a key still valid is dropped',
      { ...rotated, demo: [{ key: KEY_A, expires: IN_ONE_PERIOD }, FRESH] },
      [notOneRotation('demo', `key ${keyIdOf(KEY_B)} is still valid but missing`)],
    ],
    [
      'two fresh keys are added',
      { ...rotated, demo: [...rotated.demo, FRESH_2] },
      [notOneRotation('demo', `key ${keyIdOf(FRESH)} is not in the current version`)],
    ],
    [
      'the kept keys are in another order',
      {
        ...rotated,
        demo: [{ key: KEY_B, expires: IN_ONE_PERIOD }, { key: KEY_A, expires: IN_ONE_PERIOD }, FRESH],
      },
      [notOneRotation('demo', 'its keys are not in their current order')],
    ],
    [
      'the fresh key is one the app already had',
      { ...rotated, demo: [{ key: KEY_B, expires: IN_ONE_PERIOD }, KEY_A] },
      [notOneRotation('demo', 'its last key is not one it did not have')],
    ],
    [
      'keys are only dropped',
      { ...rotated, demo: [KEY_B] },
      [notOneRotation('demo', 'its last key is not one it did not have')],
    ],
    [
      'a superseded key keeps living forever (the count rule of old)',
      { ...rotated, demo: [KEY_A, KEY_B, FRESH] },
      [
        notOneRotation(
          'demo',
          `key ${keyIdOf(KEY_A)} has no expiry, though a rotation gives every superseded key one`,
        ),
      ],
    ],
    [
      'a superseded key lives longer than keep - 1 periods',
      { ...rotated, demo: [{ key: KEY_A, expires: '2026-04-02T12:00:00Z' }, rotated.demo[1], FRESH] },
      [notOneRotation('demo', `key ${keyIdOf(KEY_A)} expires later than a rotation made now allows`)],
    ],
    [
      'the fresh key has an expiry though the app has a key without one',
      { ...rotated, demo: [rotated.demo[0], rotated.demo[1], { key: FRESH, expires: IN_ONE_PERIOD }] },
      [notOneRotation('demo', 'its fresh key does not expire as a rotation sets it')],
    ],
    [
      'a digest app gets a key',
      { ...rotated, hashed: [HASHED, FRESH_2] },
      [notOneRotation('hashed', 'it holds a sha256: key, which rotation leaves unchanged')],
    ],
    [
      'a digest is the fresh key',
      { ...rotated, demo: [rotated.demo[0], rotated.demo[1], toDigestForm(FRESH)] },
      [notOneRotation('demo', 'its last key is not one it did not have')],
    ],
    [
      'an allowlist is added',
      { ...rotated, demo: { keys: rotated.demo, allowedCidrs: ['0.0.0.0/0'] } },
      [notOneRotation('demo', 'its allowlist changed')],
    ],
    [
      'a rate limit is added',
      { ...rotated, demo: { keys: rotated.demo, rateLimit: { perSecond: 10000 } } },
      [notOneRotation('demo', 'its rate limit changed')],
    ],
    [
      'the payment Lambda reads it with problems (named by app and key position)',
      { demo: [KEY_B, 'short'], hashed: [HASHED] },
      ['entry #1, key #2: key length must be 16 to 512 characters'],
    ],
    [
      'an expiry does not parse (named by position)',
      { ...rotated, demo: [{ key: KEY_A, expires: '31/03/2026' }, FRESH] },
      [`entry #1, key #1: "expires" must be ${TIMESTAMP_RULE}`],
    ],
  ])('refuses a pending version where %s', (_label, pending, problems) => {
    expect(pendingVersionProblems(current, JSON.stringify(pending), CHECK)).toEqual(problems);
  });

  describe('after an operator changed the current version during the rotation', () => {
    const pending = JSON.stringify(rotated);

    it.each([
      [
        'added a key',
        { ...currentEntries, demo: [KEY_A, KEY_B, FRESH_2] },
        `key ${keyIdOf(FRESH_2)} is still valid but missing`,
      ],
      [
        'revoked a key',
        { ...currentEntries, demo: [KEY_B] },
        `key ${keyIdOf(KEY_A)} is not in the current version`,
      ],
      [
        'expired a key at once',
        { ...currentEntries, demo: [{ key: KEY_A, expires: '2026-03-01T12:00:10Z' }, KEY_B] },
        `key ${keyIdOf(KEY_A)} expires later than in the current version`,
      ],
      [
        'rotated the app with a grace period',
        {
          ...currentEntries,
          demo: [
            { key: KEY_A, expires: '2026-03-02T00:00:00Z' },
            { key: KEY_B, expires: '2026-03-02T00:00:00Z' },
            FRESH_2,
          ],
        },
        `key ${keyIdOf(KEY_A)} expires later than in the current version`,
      ],
      [
        'fenced the app to a network',
        { ...currentEntries, demo: { keys: [KEY_A, KEY_B], allowedCidrs: ['198.51.100.0/24'] } },
        'its allowlist changed',
      ],
    ])('refuses it when the operator %s', (_label, changed, why) => {
      expect(pendingVersionProblems(JSON.stringify(changed), pending, CHECK)).toEqual([
        notOneRotation('demo', why),
      ]);
    });
  });

  it('refuses an app that had no valid key and now has only a fresh one: rotation never gives access back', () => {
    const lapsed = JSON.stringify({ lapsed: [{ key: KEY_A, expires: '2026-01-01T00:00:00Z' }] });

    expect(pendingVersionProblems(lapsed, JSON.stringify({ lapsed: [FRESH] }), CHECK)).toEqual([
      notOneRotation('lapsed', 'no current key is kept (rotation leaves an app with no valid key as it is)'),
    ]);
  });

  it('names an entry whose app id is invalid by its position only, never by its text', () => {
    const pastedKey = 'payk_' + 'P'.repeat(43);
    const pending = `{"demo": ["${KEY_B}", "${FRESH}"], "${pastedKey}": ["${FRESH}"], "hashed": ["${HASHED}"]}`;

    const problems = pendingVersionProblems(current, pending, CHECK);

    expect(problems).toEqual(['entry #2: app id starts with payk_, like a generated key (a pasted key?)']);
    expect(problems.join('\n')).not.toContain(pastedKey.slice(5));
  });

  it('refuses a pending version that does not parse, without quoting it', () => {
    const problems = pendingVersionProblems(current, `{"demo": ["${FRESH}"`, CHECK);

    expect(problems).toEqual(['the pending version does not parse: secret is not valid JSON']);
  });

  it('fails when the current version cannot be read strictly', () => {
    const badCurrent = JSON.stringify({ demo: [KEY_A, 'short'] });

    expect(() => pendingVersionProblems(badCurrent, JSON.stringify({ demo: [KEY_A, FRESH] }), CHECK)).toThrow(
      new RotationError(
        "the current version: the secret's entry #1, key #2: key length must be 16 to 512 characters",
      ),
    );
  });
});
