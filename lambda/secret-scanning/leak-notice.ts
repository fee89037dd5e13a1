import { PublishCommand, type SNSClient } from '@aws-sdk/client-sns';

/** What the function did about one leaked key: never the key itself. */
export type LeakAction =
  /** Its entry now expires at the report's instant. */
  | 'revoked'
  /** Its entry had already expired (an earlier report, or an operator): nothing written. */
  | 'already_revoked'
  /** `secretScanningAction=report`: told, not changed. */
  | 'reported'
  /** The write failed: the key still works. */
  | 'revoke_failed';

export interface LeakedKey {
  readonly appId: string;
  readonly keyId: string;
  readonly shard: number;
  readonly action: LeakAction;
  /** Where GitHub found it. */
  readonly url: string;
  readonly source: string;
  readonly tokenType: string;
}

/** Tells the operators of the keys in one report. */
export type LeakNotifier = (leaks: readonly LeakedKey[]) => Promise<void>;

/** SNS's subject limit is 100 characters; a notice of a large report lists this many keys, then a count. */
export const MAX_KEYS_PER_NOTICE = 200;

/** The notice's subject and text: app ids, key ids, shards, actions and URLs, never a key. Pure. */
export function noticeText(leaks: readonly LeakedKey[]): {
  readonly subject: string;
  readonly message: string;
} {
  const failed = leaks.filter((leak) => leak.action === 'revoke_failed').length;
  const subject =
    failed > 0
      ? `payment-api: ${leaks.length} leaked key(s) reported, ${failed} NOT revoked`
      : `payment-api: ${leaks.length} leaked key(s) reported by GitHub secret scanning`;
  const lines = leaks
    .slice(0, MAX_KEYS_PER_NOTICE)
    .map(
      (leak) =>
        `- app ${leak.appId}, key ${leak.keyId} (shard ${leak.shard}): ${leak.action}; found at ${leak.url || 'an unnamed place'} (${leak.source || 'unknown source'})`,
    );
  const more = leaks.length - lines.length;
  const message = [
    'GitHub secret scanning reported keys of this payment API in public.',
    '',
    ...lines,
    ...(more > 0
      ? [`- and ${more} more: see the log lines "key_leaked" of the secret scanning function`]
      : []),
    '',
    failed > 0
      ? 'Keys marked revoke_failed still work: revoke them now with "npm run keys -- leaked" (docs/operations.md).'
      : 'Give each app a new key and ask the partner to remove the leaked one where it was found (docs/operations.md, "A partner\'s key leaked").',
  ].join('\n');
  return { subject, message };
}

export function createSnsLeakNotifier(client: SNSClient, topicArn: string): LeakNotifier {
  return async (leaks) => {
    const { subject, message } = noticeText(leaks);
    await client.send(new PublishCommand({ TopicArn: topicArn, Subject: subject, Message: message }));
  };
}
