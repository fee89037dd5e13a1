import type {
  CustomResourceEvent,
  CustomResourceResponse,
} from '../../../../lambda/demo-key/cloudformation-response';
import { createDemoKeyHandler } from '../../../../lambda/demo-key/create-demo-key-handler';
import type { DemoKeySecrets } from '../../../../lambda/demo-key/place-demo-key';
import { captureLogs } from '../../../support/capture-logger';
import { DEMO_KEY, PARTNER_KEY } from '../../../support/keys';

const SHARD_ZERO = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:PaymentApiKeys-AbCdEf';
const HOME =
  'arn:aws:secretsmanager:eu-west-1:123456789012:secret:payment-api/PaymentApi/keys/shard-19-GhIjKl';

/** Secrets Manager in memory: the two secrets' texts, and every write. */
class FakeSecrets implements DemoKeySecrets {
  readonly writes: { secretId: string; secretString: string; token: string }[] = [];
  failReads = false;

  constructor(readonly texts: Map<string, string>) {}

  read(secretId: string): Promise<string> {
    const text = this.texts.get(secretId);
    if (this.failReads) return Promise.reject(new Error('AccessDeniedException: not allowed'));
    if (text === undefined) return Promise.reject(new Error(`ResourceNotFoundException: ${secretId}`));
    return Promise.resolve(text);
  }

  write(secretId: string, secretString: string, token: string): Promise<void> {
    this.writes.push({ secretId, secretString, token });
    this.texts.set(secretId, secretString);
    return Promise.resolve();
  }
}

function eventOf(requestType: CustomResourceEvent['RequestType']): CustomResourceEvent {
  return {
    RequestType: requestType,
    ResponseURL: 'https://cloudformation-custom-resource-response.example/reply',
    StackId: 'arn:aws:cloudformation:eu-west-1:123456789012:stack/PaymentApi/1',
    RequestId: '6f1c2a3b-4d5e-4f60-8a9b-0c1d2e3f4a5b',
    LogicalResourceId: 'DemoKeyHomePlacement',
    ResourceProperties: { ShardZero: SHARD_ZERO, Home: HOME },
  };
}

function run(texts: Record<string, string>, requestType: CustomResourceEvent['RequestType'] = 'Create') {
  const secrets = new FakeSecrets(new Map(Object.entries(texts)));
  const responses: CustomResourceResponse[] = [];
  const logs = captureLogs();
  const handler = createDemoKeyHandler({
    secrets,
    respond: (_url, response) => {
      responses.push(response);
      return Promise.resolve();
    },
    logger: logs.logger,
  });
  return { secrets, responses, logs, done: handler(eventOf(requestType)) };
}

describe('the demo key custom resource', () => {
  it("copies shard 0's generated demo key into demo's home shard when the stack is created", async () => {
    const { secrets, responses, done } = run({
      [SHARD_ZERO]: JSON.stringify({ demo: DEMO_KEY }),
      [HOME]: '{}',
    });
    await done;

    expect(JSON.parse(secrets.texts.get(HOME) ?? '')).toEqual({ demo: DEMO_KEY });
    expect(secrets.writes).toHaveLength(1);
    expect(secrets.writes[0]?.token).toBe(eventOf('Create').RequestId);
    expect(responses).toEqual([
      expect.objectContaining({ Status: 'SUCCESS', Reason: 'demo key: copied', NoEcho: true }),
    ]);
    expect(JSON.stringify(responses)).not.toContain(DEMO_KEY);
  });

  const WITH_DEMO = JSON.stringify({ demo: DEMO_KEY });

  it.each<[string, Record<string, string>, CustomResourceEvent['RequestType'], string]>([
    [
      'a home shard that holds apps already (a stack upgraded, not created)',
      { [SHARD_ZERO]: WITH_DEMO, [HOME]: JSON.stringify({ partner: PARTNER_KEY }) },
      'Create',
      'demo key: home-not-empty',
    ],
    ['shard 0 holding no demo key', { [SHARD_ZERO]: '{}', [HOME]: '{}' }, 'Create', 'demo key: no-demo-key'],
    [
      'an Update: a reshard moves demo with the other apps',
      { [SHARD_ZERO]: WITH_DEMO, [HOME]: '{}' },
      'Update',
      'Update: nothing to do (a reshard places demo with the other apps)',
    ],
    [
      'a Delete: every shard is retained',
      { [SHARD_ZERO]: WITH_DEMO, [HOME]: '{}' },
      'Delete',
      'Delete: nothing to do (a reshard places demo with the other apps)',
    ],
  ])('writes nothing, and succeeds, for %s', async (_label, texts, type, reason) => {
    const { secrets, responses, done } = run(texts, type);
    await done;

    expect(secrets.writes).toEqual([]);
    expect(responses).toEqual([expect.objectContaining({ Status: 'SUCCESS', Reason: reason })]);
  });

  it('fails the resource in one line that names the error, never a key, when a secret cannot be read or parsed', async () => {
    const unreadable = run({ [SHARD_ZERO]: JSON.stringify({ demo: DEMO_KEY }), [HOME]: '{}' });
    unreadable.secrets.failReads = true;
    const garbled = run({ [SHARD_ZERO]: `{"demo": "${DEMO_KEY}"`, [HOME]: '{}' });
    await Promise.all([unreadable.done, garbled.done]);

    expect(unreadable.responses[0]).toMatchObject({
      Status: 'FAILED',
      Reason: `demo key not placed in ${HOME}: Error: AccessDeniedException: not allowed`,
    });
    expect(garbled.responses[0]).toMatchObject({
      Status: 'FAILED',
      Reason: `demo key not placed in ${HOME}: MalformedSecretError: secret is not JSON`,
    });
    for (const { responses, logs, secrets } of [unreadable, garbled]) {
      expect(secrets.writes).toEqual([]);
      expect(JSON.stringify(responses) + logs.lines.join('\n')).not.toContain(DEMO_KEY);
    }
  });
});
