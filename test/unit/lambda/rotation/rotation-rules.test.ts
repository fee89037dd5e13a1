import { toDigestForm } from '../../../../shared/keys/key-material';
import {
  decideStep,
  isRotationStep,
  pendingVersionProblems,
  RotationError,
  type RotationState,
} from '../../../../lambda/rotation/rotation-rules';

const TOKEN = '6a0f8b4e-3c1d-4f2a-9b7e-1d2c3b4a5f60';
const CURRENT_VERSION = '0e1d2c3b-4a59-4687-9a1b-2c3d4e5f6a7b';

const KEY_A = 'test-rules-key-a-0123456789';
const KEY_B = 'test-rules-key-b-0123456789';
const FRESH = 'test-rules-fresh-0123456789';
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
  const current = JSON.stringify({ demo: [KEY_A, KEY_B], hashed: [HASHED] });

  it.each([
    ['one rotation with keep 2', { demo: [KEY_B, FRESH], hashed: [HASHED] }],
    ['one rotation with keep 3', { demo: [KEY_A, KEY_B, FRESH], hashed: [HASHED] }],
    [
      'an unchanged copy (what a rotation test without rotating writes)',
      { demo: [KEY_A, KEY_B], hashed: [HASHED] },
    ],
  ])('accepts %s', (_label, pending) => {
    expect(pendingVersionProblems(current, JSON.stringify(pending))).toEqual([]);
  });

  it.each([
    ['an app is missing', { demo: [KEY_B, FRESH] }, ['app hashed is missing from the pending version']],
    [
      'an app was added (an operator added it after the pending version was made)',
      { demo: [KEY_B, FRESH], hashed: [HASHED], partner: [FRESH] },
      ['app partner is in the pending version but not in the current one'],
    ],
    [
      'the newest current key is dropped',
      { demo: [KEY_A, FRESH], hashed: [HASHED] },
      ['app demo: the pending keys are not one rotation of the current keys'],
    ],
    [
      'two fresh keys are added',
      { demo: [KEY_B, FRESH, 'test-rules-fresh-2-0123456789'], hashed: [HASHED] },
      ['app demo: the pending keys are not one rotation of the current keys'],
    ],
    [
      'the fresh key is one the app already had',
      { demo: [KEY_B, KEY_A], hashed: [HASHED] },
      ['app demo: the pending keys are not one rotation of the current keys'],
    ],
    [
      'keys are only dropped',
      { demo: [KEY_B], hashed: [HASHED] },
      ['app demo: the pending keys are not one rotation of the current keys'],
    ],
    [
      'a digest app gets a key',
      { demo: [KEY_B, FRESH], hashed: [HASHED, FRESH] },
      ['app hashed: the pending keys are not one rotation of the current keys'],
    ],
  ])('refuses a pending version where %s', (_label, pending, problems) => {
    expect(pendingVersionProblems(current, JSON.stringify(pending))).toEqual(problems);
  });

  it('refuses a pending version that the payment Lambda reads with problems, naming app and key position', () => {
    const pending = JSON.stringify({ demo: [KEY_B, 'short'], hashed: [HASHED] });

    expect(pendingVersionProblems(current, pending)).toEqual([
      'entry #1, key #2: key length must be 16 to 512 characters',
    ]);
  });

  it('names an entry whose app id is invalid by its position only, never by its text', () => {
    const pastedKey = 'payk_' + 'P'.repeat(43);
    const pending = `{"demo": ["${KEY_B}", "${FRESH}"], "${pastedKey}": ["${FRESH}"], "hashed": ["${HASHED}"]}`;

    const problems = pendingVersionProblems(current, pending);

    expect(problems).toEqual(['entry #2: app id starts with payk_, like a generated key (a pasted key?)']);
    expect(problems.join('\n')).not.toContain(pastedKey.slice(5));
  });

  it('refuses a pending version that does not parse, without quoting it', () => {
    const problems = pendingVersionProblems(current, `{"demo": ["${FRESH}"`);

    expect(problems).toEqual(['the pending version does not parse: secret is not valid JSON']);
  });

  it('fails when the current version cannot be read strictly', () => {
    const badCurrent = JSON.stringify({ demo: [KEY_A, 'short'] });

    expect(() => pendingVersionProblems(badCurrent, JSON.stringify({ demo: [KEY_A, FRESH] }))).toThrow(
      new RotationError(
        "the current version: the secret's entry #1, key #2: key length must be 16 to 512 characters",
      ),
    );
  });
});
