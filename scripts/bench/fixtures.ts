import { join } from 'node:path';
import { paymentEvent } from '../../test/support/events';
import { DEMO_KEY } from '../../test/support/keys';

export const PROJECT_ROOT = join(__dirname, '..', '..');

/** One valid request of app demo, as API Gateway sends it. */
export const EVENT = paymentEvent([
  ['Content-Type', 'application/json'],
  ['App-id', 'demo'],
  ['App-key', DEMO_KEY],
]);
