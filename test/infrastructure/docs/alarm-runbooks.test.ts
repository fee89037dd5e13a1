/** Each alarm the stack creates links to its runbook section in docs/operations.md, and each section has its alarm. */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { Duration } from 'aws-cdk-lib';
import { resourcesOf, sharedStackTemplate } from '../../support/construct-template';
import { brokenLinkReason, PROJECT_ROOT } from '../../support/markdown';

const README = path.join(PROJECT_ROOT, 'README.md');
const OPERATIONS = path.join(PROJECT_ROOT, 'docs', 'operations.md');

/** `Runbook: docs/<page>.md#<anchor>` at the very end of a description. */
const RUNBOOK_LINK = /Runbook: (docs\/[\w-]+\.md#[\w-]+)$/;
/** A runbook link is relative to the repository's root, as a link in README.md is. */
const LINKED_FROM_ROOT = README;
const STACK_NAME = 'PaymentApi';

/** A template value as text: a token (an `Fn::Join`, a `Ref`) shows as its JSON, and then matches nothing. */
function asText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** The alarm's own name: `KeysUnavailable` for `PaymentApi-KeysUnavailable`. */
function alarmOwnName(alarmName: string): string {
  return alarmName.replace(`${STACK_NAME}-`, '');
}

describe('alarm runbook links', () => {
  let alarms: { name: string; description: string }[];

  beforeAll(() => {
    // Stack "PaymentApi" with cdk.json's feature flags, as a deploy applies them; scheduled rotation and per-app limits
    // on, so their alarms are there too; no bundling, no esbuild.
    const template = sharedStackTemplate({
      rotation: { every: Duration.days(30), keep: 2 },
      appRateLimit: { perSecond: 10 },
    });
    alarms = Object.values(resourcesOf(template, 'AWS::CloudWatch::Alarm')).map(({ Properties }) => ({
      name: asText(Properties.AlarmName),
      description: asText(Properties.AlarmDescription),
    }));
  });

  it('every alarm description ends with a runbook link to its own section, and the link resolves', () => {
    // Arrange: the section of `PaymentApi-KeysUnavailable` is `### KeysUnavailable`, anchor #keysunavailable.
    const expected = alarms.map(({ name }) => ({
      name,
      runbook: `docs/operations.md#${alarmOwnName(name).toLowerCase()}`,
      problem: undefined,
    }));

    // Act
    const found = alarms.map(({ name, description }) => {
      const runbook = RUNBOOK_LINK.exec(description)?.[1];
      return runbook === undefined
        ? { name, runbook: `none at the end of: ${description}`, problem: 'no runbook link' }
        : { name, runbook, problem: brokenLinkReason(LINKED_FROM_ROOT, runbook) };
    });

    // Assert
    expect(alarms.length).toBeGreaterThan(0);
    expect(found).toEqual(expected);
  });

  it('the operations page has one section per alarm the stack creates, and none for an alarm it does not', () => {
    // Arrange
    const operations = readFileSync(OPERATIONS, 'utf8');
    const alarmsSection = operations.split('\n## Alarms\n')[1]?.split('\n## ')[0] ?? '';

    // Act
    const documented = [...alarmsSection.matchAll(/^### (.+)$/gm)].map((match) => match[1] ?? '');

    // Assert
    expect(documented.sort()).toEqual(alarms.map(({ name }) => alarmOwnName(name)).sort());
  });
});
