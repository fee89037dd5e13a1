import { ENV } from '../../../../lambda/payment/settings';
import { KEY_STORE_ENV } from '../../../../tools/common/key-store-env';

describe('KEY_STORE_ENV', () => {
  it("names the secret by the payment Lambda's own variable, so one setting points the Lambda, the server and the CLI", () => {
    expect(KEY_STORE_ENV.secretId).toBe(ENV.secretId);
  });
});
