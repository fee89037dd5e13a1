import { Match, Template } from 'aws-cdk-lib/assertions';
import { applyEnvironment } from '../../../bin/environments';
import { createApp } from '../../../bin/payment-api';
import { unbundledApp } from '../../support/construct-template';
import { contextProblems as problemsOf } from './app';

const ENVIRONMENTS = {
  staging: { wafRateLimit: 2000, keyCacheTtlSeconds: 30 },
  production: { wafRateLimit: 5000, logLevel: 'warn' },
};

describe('applyEnvironment', () => {
  it('passes the context through when cdk.json has no environments', () => {
    const context = { env: 'staging', wafRateLimit: '100' };

    expect(applyEnvironment(context)).toEqual({ context, fromEntry: new Map() });
  });

  it("fills in the chosen entry's keys and takes the environments out", () => {
    const { context, fromEntry } = applyEnvironment({ environments: ENVIRONMENTS, env: 'staging' });

    expect(context).toEqual({ env: 'staging', wafRateLimit: 2000, keyCacheTtlSeconds: 30 });
    expect([...fromEntry]).toEqual([
      ['wafRateLimit', 'environments.staging'],
      ['keyCacheTtlSeconds', 'environments.staging'],
    ]);
  });

  it('lets a key given anywhere else in the context win over the entry', () => {
    const { context, fromEntry } = applyEnvironment({
      environments: ENVIRONMENTS,
      env: 'staging',
      keyCacheTtlSeconds: '45',
    });

    expect(context).toMatchObject({ wafRateLimit: 2000, keyCacheTtlSeconds: '45' });
    expect(fromEntry.has('keyCacheTtlSeconds')).toBe(false);
  });

  it('treats an empty value as unset, so the entry fills it', () => {
    const { context } = applyEnvironment({
      environments: ENVIRONMENTS,
      env: 'staging',
      keyCacheTtlSeconds: '',
    });

    expect(context).toMatchObject({ keyCacheTtlSeconds: 30 });
  });

  it('applies no entry without env: the default stack', () => {
    expect(applyEnvironment({ environments: ENVIRONMENTS }).context).toEqual({});
  });

  it('refuses an env that names no entry, with the known ones and the nearest', () => {
    expect(problemsOf(() => applyEnvironment({ environments: ENVIRONMENTS, env: 'prodution' }))).toEqual([
      'context "env" is "prodution", which names no entry of "environments" in cdk.json (known: staging, production); did you mean "production"?',
    ]);
  });

  it('refuses any env when environments is empty', () => {
    expect(problemsOf(() => applyEnvironment({ environments: {}, env: 'staging' }))).toEqual([
      'context "env" is "staging", which names no entry of "environments" in cdk.json (known: none)',
    ]);
  });

  it('checks every entry, chosen or not: unknown keys get the nearest known one, env cannot be set there', () => {
    const environments = {
      staging: { wafRateLimt: 2000 },
      production: { env: 'other', keyCacheTTL: 30 },
    };

    expect(problemsOf(() => applyEnvironment({ environments, env: 'staging' }))).toEqual([
      'context "wafRateLimt" in environments.staging is not a setting of this app; did you mean "wafRateLimit"?',
      'context "env" in environments.production cannot be set there: the entry is chosen by "env"',
      'context "keyCacheTTL" in environments.production is not a setting of this app; did you mean "keyCacheTtlSeconds"?',
    ]);
  });

  it.each([
    [
      'a list',
      ['staging'],
      'context "environments" must be an object mapping environment names to their settings, got ["staging"]',
    ],
    [
      'a string',
      'staging',
      'context "environments" must be an object mapping environment names to their settings, got "staging"',
    ],
  ])('refuses environments that is %s', (_case, environments, line) => {
    expect(problemsOf(() => applyEnvironment({ environments }))).toEqual([line]);
  });

  it('refuses an entry that is not an object, and an entry no env could select', () => {
    const environments = { staging: 2000, 'my prod': {} };

    expect(problemsOf(() => applyEnvironment({ environments }))).toEqual([
      'context "environments.staging" must be an object of context keys and values, got 2000',
      'context "environments" has an entry named "my prod", which no env can select: an environment name must be 1 to 24 letters, digits or hyphens, starting with a letter and not ending with a hyphen',
    ]);
  });
});

describe('the CDK app with environments in its context', () => {
  function synthesizeWith(context: Record<string, unknown>): Template {
    const app = createApp(unbundledApp(context));
    const stack = app.node.children.find((child) => child.node.id.startsWith('PaymentApi'));
    if (stack === undefined) throw new Error('no PaymentApi stack');
    return Template.fromJSON(app.synth().getStackByName(stack.node.id).template as Record<string, unknown>);
  }

  it("builds the env's stack with its entry's settings", () => {
    const template = synthesizeWith({ environments: ENVIRONMENTS, env: 'production' });

    template.hasResourceProperties('AWS::WAFv2::WebACL', {
      Rules: Match.arrayWith([
        Match.objectLike({ Statement: { RateBasedStatement: Match.objectLike({ Limit: 5000 }) } }),
      ]),
    });
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ LOG_LEVEL: 'warn' }) },
    });
  });

  it("checks an entry's values like any context value", () => {
    const environments = { staging: { wafRateLimit: 'lots' } };

    expect(problemsOf(() => createApp(unbundledApp({ environments, env: 'staging' })))).toEqual([
      'context "wafRateLimit" (from environments.staging) must be a whole number of requests per 5 minutes from 10 to 2000000000, got "lots"',
    ]);
  });
});
