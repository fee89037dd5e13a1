import { toDigestForm } from '../../shared/keys/key-material';

/** Fixture keys: long enough to be valid, obviously fake. */
export const DEMO_KEY = 'test-demo-key-0123456789abcdef';
export const DEMO_NEXT_KEY = 'test-demo-next-key-0123456789abcdef';
export const PARTNER_KEY = 'test-partner-key-0123456789abcdef';
export const HASHED_APP_KEY = 'test-hashed-app-key-0123456789abcdef';

/** A secret in the documented format: one key, a key list, and a digest-only app. */
export const SECRET_STRING = JSON.stringify({
  demo: [DEMO_KEY, DEMO_NEXT_KEY],
  partner: PARTNER_KEY,
  hashed: [toDigestForm(HASHED_APP_KEY)],
});
