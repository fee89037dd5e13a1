import { describeError, type Logger } from '../../shared/logger';
import type { CustomResourceEvent, Respond } from './cloudformation-response';
import { placeDemoKey, type DemoKeySecrets } from './place-demo-key';

export interface DemoKeyHandlerDependencies {
  readonly secrets: DemoKeySecrets;
  readonly respond: Respond;
  readonly logger: Logger;
}

const PHYSICAL_ID = 'payment-api-demo-key-home';

/**
 * The custom resource that puts the generated demo key in demo's home shard (place-demo-key.ts). It acts on Create
 * only: an Update (the shard count changed) leaves the keys to `keys reshard`, and a Delete leaves every shard as it
 * is (they are retained). A failure fails the resource, with one line naming the error (never a key), so a new stack
 * never comes up answering 401 to the README's own call.
 */
export function createDemoKeyHandler(dependencies: DemoKeyHandlerDependencies) {
  const { secrets, respond, logger } = dependencies;
  return async (event: CustomResourceEvent): Promise<void> => {
    const reply = (Status: 'SUCCESS' | 'FAILED', Reason: string) =>
      respond(event.ResponseURL, {
        Status,
        Reason,
        PhysicalResourceId: event.PhysicalResourceId ?? PHYSICAL_ID,
        StackId: event.StackId,
        RequestId: event.RequestId,
        LogicalResourceId: event.LogicalResourceId,
        NoEcho: true,
      });
    if (event.RequestType !== 'Create') {
      await reply(
        'SUCCESS',
        `${event.RequestType}: nothing to do (a reshard places demo with the other apps)`,
      );
      return;
    }
    const { ShardZero: shardZero, Home: home } = event.ResourceProperties;
    if (typeof shardZero !== 'string' || typeof home !== 'string') {
      await reply('FAILED', 'ShardZero and Home must name the two secrets');
      return;
    }
    try {
      const outcome = await placeDemoKey(secrets, { shardZero, home }, event.RequestId);
      logger.info('demo key placed', { outcome, home });
      await reply('SUCCESS', `demo key: ${outcome}`);
    } catch (error) {
      const reason = describeError(error);
      logger.error('demo key not placed', { home, error: reason });
      await reply('FAILED', `demo key not placed in ${home}: ${reason}`);
    }
  };
}
